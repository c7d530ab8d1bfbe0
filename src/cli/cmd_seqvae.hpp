#pragma once
// `lava train --task seqvae` and `lava eval --task seqvae` (cmd_seqvae.cpp). Each parses its whole command line itself,
// --task included; argv[0] is the command name ("train" or "eval"). Return the process exit code; errors are thrown
// (UsageError -> 2, InputError -> 1) like every other command.
namespace lava {

int cmd_train_seqvae(int argc, char** argv);
int cmd_eval_seqvae(int argc, char** argv);

}  // namespace lava
