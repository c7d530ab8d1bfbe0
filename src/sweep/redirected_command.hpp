#pragma once
// Runs a lava command in this process with stdout and stderr sent to two files: lava sweep exec's training and
// evaluations (in this process, so that a scheduler's SIGTERM reaches the trainer itself, once).
#include <functional>
#include <string>
#include <vector>

namespace lava {

// Runs a lava command with these arguments (argv[0] is the command, "train" or "eval") and returns its exit code;
// errors it throws are the caller's to turn into a message and a code (run_redirected catches them).
using CommandEntry = std::function<int(std::vector<std::string> args)>;

// Runs `command` with stdout and stderr sent to out_fd and err_fd, and turns whatever it throws into main()'s
// message and exit code (2 for a usage error, 1 otherwise). A write to either file that failed (a full disk) makes
// a success a failure, exit 1: the figures or the log are incomplete.
int run_redirected(const CommandEntry& command, std::vector<std::string> args, int out_fd, int err_fd,
                   const std::string& out_path, const std::string& err_path);

}  // namespace lava
