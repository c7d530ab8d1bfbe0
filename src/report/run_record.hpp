#pragma once
// The record one training run of a sweep leaves in its own directory, written by `lava sweep exec` and read by
// `lava report`:
//
//   RUN/config.ini     the exact options the run trained with (key = value; `lava train --config` reads it)
//   RUN/run.json       {"id", "index", "sweep", "task", "seed", "grid": {key: value, ...}}: what it is in its sweep
//   RUN/status.json    {"state": running|finished|failed|stopped, "exit", "signal", "sessions", "host", ...}
//   RUN/metrics.jsonl  lava train's JSON lines (epochs, "stopped", "done"), appended over every session
//   RUN/train.log      lava train's stderr and the sweep's own notes ("resuming from ..."), appended likewise
//   RUN/model.safetensors, RUN/model.safetensors.resume   the best model and the resume state
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.hpp"

namespace lava {

inline constexpr const char* kRunConfigFile = "config.ini";
inline constexpr const char* kRunInfoFile = "run.json";
inline constexpr const char* kRunStatusFile = "status.json";
inline constexpr const char* kRunMetricsFile = "metrics.jsonl";
inline constexpr const char* kRunLogFile = "train.log";
inline constexpr const char* kRunModelFile = "model.safetensors";
inline constexpr const char* kRunEvalDir = "eval";  // eval/NAME.jsonl: one evaluation of the run's model

// How far a run got. `running` is also what a run killed without warning (SIGKILL, a lost node) leaves behind.
enum class RunState { not_started, running, finished, failed, stopped };
const char* to_string(RunState s);

struct RunStatus {
  RunState state = RunState::not_started;
  int exit_code = 0;     // lava train's exit code (128 + signal for a stop by signal)
  std::string signal;    // "SIGTERM" when state == stopped
  int64_t sessions = 0;  // how many times the run was started (1 + resumes)
  std::string host, slurm_job;
};

// RUN/status.json, or not_started when it is absent. A malformed file throws InputError naming it.
RunStatus read_run_status(const std::string& run_dir);
void write_run_status(const std::string& run_dir, const RunStatus& s);  // atomic

// What `lava report` needs of one run.
struct RunRecord {
  std::string dir;
  std::string id, sweep, task;
  int64_t index = 0, seed = 0;
  std::vector<std::pair<std::string, std::string>> grid;  // grid key -> this run's value, in the sweep's order
  RunStatus status;
  // The last "done" line of metrics.jsonl with the numbers of the last epoch line marked best beneath it
  // (the done line wins a key both have); nullopt when the run never printed a done line.
  std::optional<JsonValue> summary;
  std::optional<JsonValue> last_epoch;  // metrics.jsonl's last "epoch" line: how far a run still training has got
  bool nan = false;  // the done line says training stopped on a NaN
  // The result row of each evaluation RUN/eval/NAME.jsonl (its last line without "event", or with "event": "eval"
  // as the sequence VAE's lava eval --format json prints it), by NAME, sorted by name.
  std::vector<std::pair<std::string, JsonValue>> evals;
  // The InputError of the first file that could not be read ("FILE:LINE: what"), empty when all could. A run with
  // an unreadable run.json has no id, sweep, seed or grid.
  std::string unreadable;
};

// Reads RUN/run.json, RUN/status.json, RUN/metrics.jsonl and RUN/eval/*.jsonl. A malformed (or an evaluation
// without a result row) one does not throw: its InputError goes
// into `unreadable`, so that one bad file costs its own run's row, not the whole report.
RunRecord read_run_record(const std::string& run_dir);

// The run directories under each DIR: DIR itself when it holds run.json, otherwise every directory at any depth
// below it that does (sorted by path; a run's own subdirectories are not searched, symlinks not followed). A DIR with neither throws InputError. A directory reached twice (DIR given twice, or DIR and
// DIR/RUN, or through a symlink) is listed once, where it was first reached.
std::vector<std::string> find_run_dirs(const std::vector<std::string>& dirs);

// Throws InputError naming both directories when two runs are the same run of the same sweep (a copied run
// directory): counting both would count one result twice.
void refuse_duplicate_runs(const std::vector<RunRecord>& runs);

}  // namespace lava
