#pragma once
// One run of a sweep, as `lava sweep exec FILE --run ID` does it (every scheduler runs exactly this):
//   - a finished run is skipped;
//   - the run's directory gets its config.ini and run.json (an existing config.ini must be the same);
//   - a run with a resume state (stopped, requeued or killed earlier) continues from it with --resume, and says so
//     in train.log;
//   - lava train runs in this process (so a scheduler's SIGTERM reaches the trainer itself, once, and it saves
//     its resume state) with stdout appended to metrics.jsonl and stderr to train.log;
//   - status.json says running while it trains and finished, failed or stopped after;
//   - a finished run then runs its missing evaluations (sweep/run_evals.hpp); a run is complete when it finished
//     and every evaluation has its result, and only a complete run is skipped.
#include <functional>
#include <string>
#include <vector>

#include "sweep/redirected_command.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

namespace lava {

// Runs `lava train` (or `lava eval`) with these arguments (argv[0] is "train" or "eval") and returns its exit code.
using TrainEntry = CommandEntry;

struct ExecOptions {
  int threads = 0;  // > 0: --threads for the run (does not change the run's id or results)
};

// Creates RUN/ with its config.ini and run.json (an existing config.ini must be the same), so that lava report
// lists the run, as not started, before it ever runs.
void prepare_run_dir(const SweepFile& f, const SweepRun& r);

// The lava train arguments for run `r`: --task, --config RUN/config.ini, --save RUN/model.safetensors, --format
// json, --quiet, and --resume RUN/model.safetensors.resume when `resume`.
std::vector<std::string> train_arguments(const SweepFile& f, const SweepRun& r, bool resume, const ExecOptions& o);

// Whether the run finished training and every evaluation of it has its result.
bool run_complete(const SweepRun& r);

// Does everything above and returns the exit code: 0 finished and evaluated (or skipped), lava train's code, or
// the first failed evaluation's, otherwise. Writes one line about the run to stdout (the scheduler's log) before
// and after, and one per evaluation. `eval` may be empty for a run without evaluations.
int run_sweep_task(const SweepFile& f, const SweepRun& r, const ExecOptions& o, const TrainEntry& train,
                   const CommandEntry& eval = {});

}  // namespace lava
