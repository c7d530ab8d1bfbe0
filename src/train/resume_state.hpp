#pragma once
// The resume state of a training run (train/loop.hpp): everything a stopped run needs to continue bit for bit as if
// it had never stopped. All randomness is counter-based (every task draws the randomness of update t from its own
// stream's child t, and the batches of epoch e are a function of the seed and e), so beside the parameters and
// Adam's moments the state is a handful of counters and sums.
//
// On disk: one safetensors file, written atomically, separate from the best-model file (`--save M` puts it at
// M.resume, resume_state_path):
//   tensors   param.<name>, adam.m.<name>, adam.v.<name>   each with the parameter's shape
//   metadata  format = "lava-train-state-2", task = the task's registry name (lava train --task)
//             run.<option>   every option a resumed run must repeat (run_identity.hpp)
//             state.*        counters and sums (numbers in shortest round-trip form, so they read back exactly)
//             best_valid     the best validation of the trajectory (drives the learning-rate decay and patience)
//             kept_valid     the validation of the model in the best-model file, which only a better one replaces
//             kept_at        its epoch and position
//             history        one line per validation of the trajectory (learning curves)
#include <cstdint>
#include <string>
#include <vector>

#include "nn/optim.hpp"
#include "train/run_identity.hpp"
#include "train/task.hpp"

namespace lava {

struct TrainState {
  int epoch = 1;          // the epoch in progress, 1-based
  int64_t batch = 0;      // its batches already done (all of them: only its validation is left)
  int64_t step = 0;       // updates so far; Adam's t
  float lr = 0;           // Adam's learning rate now, after any decay
  int stale_epochs = 0;   // epoch ends since the best validation
  int64_t validated_at = 0;    // the update count at the last validation of the trajectory
  std::vector<double> sums;    // training sums since that validation (TrainTask::sum_names order)
  double units = 0;            // tokens or questions over all updates
  double seconds = 0;          // training time so far, over all sessions
  double cpu_seconds = 0;      // the process CPU time of that training (NaN: a state written before LAVA counted it)
  Validation best;             // the trajectory's best validation (criterion −inf before the first)
  Validation kept;             // what the best-model file holds (criterion −inf: nothing written yet)
  int kept_epoch = 0;          // where that validation was made
  double kept_position = 0;
  std::vector<ValidationRecord> history;  // the trajectory's validations
};

// Where `--save MODEL` keeps the resume state: MODEL.resume.
std::string resume_state_path(const std::string& model_path);

// Written atomically. The parameters and Adam's moments must be finite (LAVA_CHECK): a NaN state is never written.
void save_train_state(const std::string& path, const std::string& task, const TrainState& state,
                      const RunIdentity& run, const ParamStore<float>& params, const Adam<float>& adam);

// Reads a state into `params` (declared, same architecture) and `adam` (moments, t, lr). A damaged or foreign file
// is one InputError naming it; an option that differs from the saved run is one UsageError naming the option and
// both values.
TrainState load_train_state(const std::string& path, const std::string& task, const RunIdentity& run,
                            size_t num_sums, ParamStore<float>& params, Adam<float>& adam);

// True when every value is finite (no NaN, no ±∞).
bool all_finite(const float* x, size_t n);

}  // namespace lava
