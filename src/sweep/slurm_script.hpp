#pragma once
// The sbatch script `lava sweep slurm` writes: a job array with one task per run of the sweep.
//
//   #SBATCH --array=0-N-1[%MAX]       one task per run; task i runs the run with index i (its id is in the script)
//   #SBATCH --output=OUT/slurm/%A_%a.out --open-mode=append   a requeued task appends to its own log
//   #SBATCH --requeue                 a preempted or requeued task goes back into the queue...
//   #SBATCH --signal=B:TERM@60        ...and 60 s before its time limit the task gets SIGTERM
//   exec LAVA sweep exec FILE [--scale S] [--set K=V ...] --run ID --threads $SLURM_CPUS_PER_TASK
//
// `exec` makes lava the batch shell itself: SIGTERM, whether from --signal=B: (sent to the batch shell only) or
// from a preemption, `scontrol requeue` or `scancel` (sent to every process of the job), reaches the trainer
// exactly once; it finishes the update in progress, saves its resume state and exits 143, and the next session of
// the task resumes from that state. (A shell in between would have to forward the signal; lava train takes further
// SIGTERMs as the same request, core/stop_signal.hpp.)
#include <cstdint>
#include <string>
#include <vector>

#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

namespace lava {

struct SlurmOptions {
  std::string job_name;   // default: the sweep file's name
  std::string partition;  // empty: the cluster's default
  std::string time;       // per task, e.g. 01:00:00; empty: the partition's default
  int cpus = 1;           // per task; also the runs' --threads
  std::string mem;        // per task, e.g. 4G; empty: the cluster's default
  int max_running = 0;    // > 0: at most this many tasks at once (--array=...%N)
  std::string lava;       // the lava binary the tasks run (absolute)
  int64_t max_runs = kDefaultMaxRuns;  // passed on to sweep exec when not the default
};

// Whether `value` can be written into an #SBATCH line as it is: not empty, and no whitespace, control character,
// quote, backslash, $ or ` (sbatch parses those lines without a shell, so nothing there can be quoted), and no %
// unless percent_allowed (a file name pattern, where the writer doubles it).
bool sbatch_safe(const std::string& value, bool percent_allowed = false);

// Every value in an #SBATCH line is checked with sbatch_safe, except that --output's directory may hold '%', which is
// written %% there; a value that fails throws InputError naming it. Paths on the exec line are shell-quoted, and
// the comment's path is escaped (quote_input).
std::string slurm_array_script(const SweepFile& f, const std::vector<SweepRun>& runs, const SlurmOptions& o);

// OUT/slurm: where the script sends the tasks' logs (sbatch does not create it).
std::string slurm_log_dir(const SweepFile& f);

}  // namespace lava
