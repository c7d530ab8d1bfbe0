#pragma once
// `lava train --task vqa` and `lava eval --task vqa` (cmd_vqa.cpp). Each parses its whole command line itself,
// --task included; argv[0] is the command name ("train" or "eval"). Return the process exit code; errors are thrown
// (UsageError -> 2, InputError -> 1) like every other command.
namespace lava {

int cmd_train_vqa(int argc, char** argv);
int cmd_eval_vqa(int argc, char** argv);

}  // namespace lava
