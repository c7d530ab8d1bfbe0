#pragma once
// lava train --task caption / lava eval --task caption: Show, Attend and Tell on the scenes (issue 25). The whole
// command line, --task included; argv[0] is the command name. Errors are thrown (UsageError -> 2, InputError -> 1).
namespace lava {

int cmd_train_caption(int argc, char** argv);
int cmd_eval_caption(int argc, char** argv);

}  // namespace lava
