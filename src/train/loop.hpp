#pragma once
// The training loop of every task (lava train --task T) over the small interface of train/task.hpp.
//
// Each update: the task's forward and backward pass on the next batch, then a stop before the update if the loss or
// the gradient norm is NaN or infinite (nothing is changed and no state is written, so the last state on disk stays
// good), else Adam with the gradient clipped to a global norm of at most `clip` (clip_factor, nn/optim.hpp).
// Validation at every epoch end and every `valid_every` updates; at an epoch end that does not beat the run's best,
// the learning rate is multiplied by lr_decay (from epoch start_decay_at on) and the epoch counts towards patience.
// The best-model file (`save`) is only ever replaced by a model whose validation criterion beats the one it holds,
// so neither a resumed nor a failed run can put a worse model there.
//
// Stopping and resuming (train/resume_state.hpp): with `save` = M the resume state goes to M.resume at every epoch
// end, every `checkpoint_every` updates, when max_steps or max_minutes stop the run, and on SIGINT/SIGTERM (the
// update in progress is finished first; summary.stop_signal says which). A run given that file as `resume`
// continues as if it had never stopped: same parameters, figures and lines, bit for bit. A run stopped inside an
// epoch by max_steps or max_minutes validates the model it stopped with (a "partial" line); that validation is not
// part of the trajectory (an uninterrupted run does not make it), so it changes neither the learning rate nor the
// run's best, but its model becomes the best-model file if it beats the one there. M is locked for the run's
// lifetime (train/save_lock.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "train/loop_options.hpp"
#include "train/save_lock.hpp"
#include "train/task.hpp"

namespace lava {

struct LoopSummary {
  int64_t steps = 0;
  int epochs = 0;              // the epoch of the last validation
  double seconds = 0, units_per_second = 0;  // training time over all sessions; tokens or questions per second
  double cpu_seconds = 0;  // the process CPU time of that training (NaN when a resumed state did not count it)
  Validation kept;             // the best validation of the run: the model in the best-model file
  int kept_epoch = 0;          // where it was made
  double kept_position = 0;
  bool stopped_on_nan = false;
  int stop_signal = 0;                        // SIGINT or SIGTERM if a signal stopped the run
  int stop_epoch = 0;                         // where the run stopped: the epoch in progress
  int64_t stop_batch = 0, stop_batches = 0;   // batches of it done, of this many
  std::string resume_state;                   // the resume state last written ("" = none)
  std::vector<ValidationRecord> history;      // the trajectory's validations, then a stop's own if any
  // Why the run stopped: "patience" (--patience epoch ends without a better validation), "epochs" (all --epochs
  // ran), "max-steps", "max-minutes", "signal" or "nan". A converged run is one that stopped on patience.
  std::string stop_reason;
};

// Trains the task (which has read its data and initialised its parameters) from where opt.resume says, or afresh.
// `lock` is the lock on opt.save, taken before the task read its data (so that a path in use fails at once).
// `task_name` goes into the resume state, which only a run of the same task may continue.
LoopSummary train_loop(const std::string& task_name, const TrainLoopOptions& opt, TrainTask& task,
                       const SaveLock& lock);

// The value of a named figure (NaN when absent).
double figure(const Figures& f, const std::string& name);

}  // namespace lava
