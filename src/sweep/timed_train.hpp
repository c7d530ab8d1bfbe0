#pragma once
// One short `lava train` or `lava eval` in a child process, timed: what `lava sweep plan --estimate` measures a run's
// cost with.
//
// The child runs the run's own training (its options in a config.ini of a scratch directory) for a given number of
// updates, in the sweep file's directory (the run's relative paths are relative to it), with --format json on
// stdout. What comes back: the updates it made, its loop time (the last validation line's "seconds": the updates
// plus the validation that max-steps ends with), the share of an epoch those updates were (the done line's
// best_epoch, the position of that one validation), and the CPU time of the whole child (wait4), which a machine
// loaded by other processes inflates far less than the wall clock.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lava {

struct TrainTiming {
  int64_t steps = 0;          // updates made
  double loop_seconds = 0;    // wall time of the training loop (updates + the stopping validation)
  double cpu_seconds = 0;     // user + system time of the child (data loading included)
  double epoch_position = 0;  // the position of its best validation: steps / batches an epoch when it made one
  int validations = 0;        // validation lines (--valid-every adds to the one max-steps stops with)
};

// The model a timing run saves (--save) in its scratch directory: its best validation's.
inline constexpr const char* kTimingModelFile = "model.safetensors";

struct TimedTrainSetup {
  std::string lava;     // the lava binary
  std::string task;
  std::string workdir;  // where the child runs (the sweep file's directory)
  std::string scratch;  // a directory of its own for config.ini, the model and the logs
  int threads = 1;
};

// Trains with `options` (key, value pairs as in a run's config.ini; none of max-steps, save, resume) for `steps`
// updates. A child that fails throws InputError with the last line it wrote to stderr (e.g. the missing data file).
TrainTiming time_train(const TimedTrainSetup& setup, const std::vector<std::pair<std::string, std::string>>& options,
                       int64_t steps);

// `lava EVAL_ARGS` (EVAL_ARGS[0] is "eval", e.g. with --limit n), in setup.workdir, its output into the scratch
// directory: the child's CPU seconds (user + system, model and data loading included). A child that fails throws
// InputError with the last line it wrote to stderr.
double time_eval(const TimedTrainSetup& setup, const std::vector<std::string>& eval_args);

// The figures of a timing run from its JSON lines (stdout); InputError naming `source` when a line is missing.
TrainTiming parse_train_timing(const std::string& json_lines, const std::string& source);

}  // namespace lava
