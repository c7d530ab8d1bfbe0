#pragma once
// The resume state of `lava train --task nmt`: everything a stopped run needs to continue bit for bit as if it had
// never stopped. All randomness is counter-based (dropout and sampling draw from CounterRng(seed, "train").child(step),
// the batches of epoch e are train_batches(pairs, options, seed, e)), so beside the parameters and Adam's moments the
// state is a handful of counters and sums.
//
// On disk: one safetensors file, written atomically, separate from the best-model file (`--save M` puts it at
// M.resume, resume_state_path):
//   tensors   param.<name>, adam.m.<name>, adam.v.<name>   each with the parameter's shape
//             best.<name>                                  only with a best-model backup (below)
//   metadata  format = "lava-train-state-1"
//             run.<option>   every option a resumed run must repeat (architecture, data, seed, optimiser, batches)
//             state.*        counters and sums (numbers in shortest round-trip form, so they read back exactly)
//             best_valid.*   the best validation figures so far
//             history        one line per finished epoch (learning curves)
//
// Best-model backup: a run that --max-steps or --max-minutes stops in the middle of an epoch validates the model it
// stopped with and keeps it as the best model when it beats every epoch so far. The uninterrupted run never makes
// that validation, so the state then also carries the best model of the run proper (best.<name> and its
// best_model.* metadata), which a resumed run writes back to the best-model file before it trains on.
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tasks/nmt/trainer.hpp"
#include "nn/optim.hpp"

namespace lava {

// One finished epoch (or the part of one a run stopped in), for learning curves. Figures are per target token.
struct EpochRecord {
  double epoch = 0;  // (e − 1) + batches done / batches in epoch e: whole for a finished epoch
  int64_t steps = 0;
  double lr = 0, train_objective = 0, train_kl = 0;
  double valid_nll = 0, valid_elbo = 0, valid_kl = 0, valid_kl_gap = 0;
};

// What the best-model file must hold again when a resumed run starts (see above).
struct BestModelBackup {
  std::vector<float> params;                 // the whole store, in declaration order
  std::map<std::string, std::string> extra;  // save_nmt's extra metadata (epoch, steps, valid_ppl)
};

struct NmtTrainState {
  int epoch = 1;        // the epoch in progress, 1-based
  int64_t batch = 0;    // its batches already done (all of them: only its validation is left)
  int64_t step = 0;     // updates so far; Adam's t
  float lr = 0;         // Adam's learning rate now, after any decay
  int stale_epochs = 0;  // validations since the best one
  double obj_sum = 0, kl_sum = 0, tok_sum = 0;  // training sums over the batches done of this epoch
  int64_t tokens_seen = 0;                      // target tokens over all steps
  double seconds = 0;                           // training time so far, over all sessions
  NmtEvalFigures best_valid = [] {
    NmtEvalFigures f;
    f.elbo = -INFINITY, f.nll = INFINITY;  // before the first validation every figure beats it
    return f;
  }();
  std::vector<EpochRecord> history;            // finished epochs
  std::optional<BestModelBackup> best_model;  // only after an off-trajectory best (see above)
};

// The options a resumed run must repeat, as ("--option", value) in the order they are checked, ending with
// ("data", a fingerprint of both vocabularies and the train and valid pairs).
using RunIdentity = std::vector<std::pair<std::string, std::string>>;
RunIdentity nmt_run_identity(const NmtTrainOptions& opt, const ParallelCorpus& corpus);

// Where `--save MODEL` keeps the resume state: MODEL.resume.
std::string resume_state_path(const std::string& model_path);

// Written atomically. The parameters and Adam's moments must be finite (LAVA_CHECK): a NaN state is never written.
void save_train_state(const std::string& path, const NmtTrainState& state, const RunIdentity& run,
                      const ParamStore<float>& params, const Adam<float>& adam);

// Reads a state into `params` (declared, same architecture) and `adam` (moments, t, lr). A damaged or foreign file
// is one InputError naming it; an option that differs from the saved run is one UsageError naming the option and
// both values.
NmtTrainState load_train_state(const std::string& path, const RunIdentity& run, ParamStore<float>& params,
                               Adam<float>& adam);

// True when every value is finite (no NaN, no ±∞).
bool all_finite(const float* x, size_t n);

}  // namespace lava
