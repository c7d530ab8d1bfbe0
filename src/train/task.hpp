#pragma once
// What the training loop (train/loop.hpp) needs from a task: the batches of an epoch, one forward and backward pass,
// a validation, writing the best model, the line that reports a validation, and the identity a resume checks. The
// loop owns everything else: Adam, clipping, the NaN/inf checks, learning-rate decay, patience, the stopping bounds,
// signals, checkpoints and the resume state, the progress bar and where the lines go.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/json.hpp"
#include "nn/params.hpp"
#include "train/run_identity.hpp"

namespace lava {

// Named scalar figures of a validation, in the task's fixed order (kept in the resume state).
using Figures = std::vector<std::pair<std::string, double>>;

struct StepResult {
  float loss = 0;             // the loss minimised; when finite, its gradient has been accumulated into the store
  std::vector<double> sums;   // the task's training sums for this batch (TrainTask::sum_names order)
  double units = 0;           // tokens or questions, for the throughput
};

struct Validation {
  double criterion = -INFINITY;  // larger is better (the bound the variant trains, per token or question)
  Figures figures;
};

// One validation and where the run stood.
struct ValidationRecord {
  int epoch = 1;             // the epoch in progress, 1-based
  double position = 0;       // (epoch − 1) + batches done / batches of the epoch
  int64_t steps = 0;
  double seconds = 0, lr = 0;  // lr: the rate the updates since the last validation used
  // The training's CPU time so far, every session (user + system, all threads). Only the line written at the time
  // carries it: the resume state's history does not keep it, and a run resumed from a state written before LAVA
  // counted CPU time has NaN (JSON null).
  double cpu_seconds = NAN;
  std::vector<double> train;   // training sums since the last validation (sum_names order)
  Validation valid;
  bool best = false;     // beat every validation of the run's trajectory before it
  bool partial = false;  // a stop's own validation inside an epoch (off the trajectory: an uninterrupted run has none)
};

// The fields every task's validation line carries right after its epoch: where the run stood and what it has cost.
inline void add_progress_fields(JsonLine& json, const ValidationRecord& r) {
  json.add("steps", r.steps).add("seconds", r.seconds).add("cpu_seconds", r.cpu_seconds).add("lr", r.lr);
}

// A validation's line: JSON for --format json (stdout), text for people (stderr).
struct ReportLine {
  JsonLine json;
  std::string text;
};

class TrainTask {
 public:
  virtual ~TrainTask() = default;
  virtual ParamStore<float>& params() = 0;
  // The names of StepResult::sums, and "tokens" or "questions".
  virtual std::vector<std::string> sum_names() const = 0;
  // The batches of epoch e (lists of example indices): a function of the seed and e only.
  virtual std::vector<std::vector<int>> epoch_batches(int epoch) = 0;
  // The forward pass on a batch at update `step` (its random draws keyed by the step), then, if the loss is finite,
  // the backward pass into the store's gradients.
  virtual StepResult step(const std::vector<int>& batch, int64_t step) = 0;
  virtual Validation validate() = 0;
  // Writes the current model to `path` as the best model ("" = no file; the task may still keep what it needs).
  virtual void save_best(const std::string& path, const ValidationRecord& r) = 0;
  // The line of a validation; `history` holds the run's validations so far, r last (for learning curves).
  virtual ReportLine report(const ValidationRecord& r, const std::vector<ValidationRecord>& history) = 0;
  // The --plot pictures of a validation (learning curves over `history`, r last). The loop calls it after the line
  // is out and the epoch's resume state is written, so that a picture that cannot be written (a full disk) ends the
  // run without losing either.
  virtual void write_plots(const ValidationRecord&, const std::vector<ValidationRecord>&) {}
  // The progress bar's text from the training sums since the last validation.
  virtual std::string progress_text(const std::vector<double>& sums, int64_t step, double units_per_second) const = 0;
  // The options and data a resume must repeat (the loop adds its own options).
  virtual RunIdentity identity() const = 0;
};

}  // namespace lava
