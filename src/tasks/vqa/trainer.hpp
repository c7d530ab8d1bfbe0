#pragma once
// Training of the VQA model (lava train --task vqa) through the training loop of train/loop.hpp (Adam, clipping,
// decay, patience, checkpoints, resume): loss normalised per question, one JSON line per validation. Dropout and
// sampling draw update t's randomness from CounterRng(seed, "vqa/train").child(t); the batches of epoch e are
// vqa_train_batches(questions, batch size, seed, e).
// The validation criterion is the bound the variant trains, per question: log p(y|x) for soft, none and marginal,
// the ELBO for the others (the Jensen bound Σ_i p_i log f_i for hard attention, where q = p).
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/vqa/eval.hpp"
#include "tasks/vqa/model.hpp"
#include "train/loop_options.hpp"

namespace lava {

struct VqaTrainOptions {
  VqaDataOptions data;
  VqaConfig model;  // attention variant and sizes; vocabulary and feature sizes come from the data
  ObjectiveOptions objective;
  // The default init 0.3 matters: the prior's additive scorer only lets the attention move once the region
  // projections leave tanh's linear range (cli/cmd_vqa.cpp's help).
  TrainLoopOptions loop = [] {
    TrainLoopOptions o;
    o.lr = 2e-3, o.init = 0.3;
    return o;
  }();
  int eval_batch_size = 256;
  std::string plot_dir;      // learning curves each validation, attention pictures of the best model at the end
  int plot_questions = 6;    // how many validation questions get an attention picture
};

// One epoch (or the part of one a run stopped in). Figures are per question.
struct VqaEpochRecord {
  double epoch = 0;  // (e − 1) + batches done / batches in epoch e
  int64_t steps = 0;
  double seconds = 0, lr = 0, train_objective = 0, train_kl = 0;
  double valid_nll = 0, valid_accuracy = 0, valid_elbo = 0, valid_kl = 0, valid_kl_gap = 0;
  double valid_region_acc_prior = 0, valid_region_acc_posterior = 0;
};

struct VqaTrainSummary {
  int64_t steps = 0;
  int epochs = 0, best_epoch = 0;
  double seconds = 0, questions_per_second = 0;
  VqaEvalFigures best_valid;
  bool stopped_on_nan = false;
  int stop_signal = 0;            // SIGINT or SIGTERM if a signal stopped the run
  int stop_epoch = 0;            // where the run stopped: the epoch in progress
  int64_t stop_batch = 0, stop_batches = 0;  // batches of it done, of this many
  std::string resume_state;       // the resume state last written ("" = none)
  std::string stop_reason;       // "patience", "epochs", "max-steps", "max-minutes", "signal" or "nan"
  std::vector<VqaEpochRecord> history;
};

// The per-question validation criterion (larger is better) of a variant; the accuracy when no validation answer
// has a likelihood (all unseen in training).
double vqa_valid_criterion(AttnVariant v, const VqaEvalFigures& f);

VqaTrainSummary train_vqa(const VqaTrainOptions& opt);

}  // namespace lava
