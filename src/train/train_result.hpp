#pragma once
// What a task's training gives back (the loop's summary plus the figures the task reports of its best model), and
// the one printer of how every `lava train --task T` ends: the "done" line, or the tail a signal stop leaves.
#include <string>
#include <utility>

#include "core/json.hpp"
#include "train/loop.hpp"

namespace lava {

struct TrainResult {
  TrainResult() = default;
  TrainResult(std::string task_name, LoopSummary summary) : task(std::move(task_name)), loop(std::move(summary)) {}
  std::string task;               // the registry name: "task" in the lines
  LoopSummary loop;
  JsonValue::Object about;        // what the run is (attn, or encoder, dec_attn, ...): after "task" in the done line
  // Where the kept model was made: its epoch position, epoch − 1 + batches done / batches an epoch (a run stopped
  // inside an epoch says how far in; `lava sweep plan --estimate` reads an epoch's length from it).
  double best_epoch = 0;
  std::string units = "tokens";   // what loop.units_per_second counts: the done line's "<units>_per_s"
  Figures best;                   // the kept validation's figures the done line reports, under their JSON names
};

// A run a signal stopped: the one stderr line (where it stopped, how to go on) and, with --format json, an event
// "stopped" on stdout; returns 128 + the signal. Otherwise the "done" line (JSON on stdout for --format json, text
// for people otherwise); returns 1 if the run stopped on a NaN, else 0.
int print_train_result(const TrainLoopOptions& opt, const TrainResult& r);

}  // namespace lava
