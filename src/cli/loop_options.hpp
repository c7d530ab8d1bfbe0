#pragma once
// The training loop's options (train/loop_options.hpp) on every `lava train --task` command line: one table, each
// task's defaults taken from its own options struct.
#include <cstdint>
#include <string>

#include "cli/command_line.hpp"
#include "train/loop_options.hpp"

namespace lava {

// `unit` names what a batch holds ("sentence pairs", "questions", "sentences").
void add_loop_options(po::options_description& options, const TrainLoopOptions& defaults, const char* unit);
// Reads them (and --seed, --format, -q from the common options); --resume R without --save saves to R minus
// ".resume"; --checkpoint-every needs --save.
void read_loop_options(const CommandLine& cl, TrainLoopOptions& out);

// The help paragraph on stopping and resuming, the same for every task.
extern const char* const kResumeHelp;

}  // namespace lava
