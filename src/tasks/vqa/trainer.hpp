#pragma once
// Training of the VQA model (lava train --task vqa). Adam, gradient clipping by global norm, loss normalised per
// question, learning rate multiplied by lr_decay from epoch `start_decay_at` on whenever the validation criterion
// does not improve on the best so far, the best checkpoint kept (written atomically), one JSON line per epoch.
// The validation criterion is the bound the variant trains, per question: log p(y|x) for soft, none and marginal,
// the ELBO for the others (the Jensen bound Σ_i p_i log f_i for hard-*, where q = p).
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/vqa/eval.hpp"
#include "tasks/vqa/model.hpp"
#include "report/table.hpp"

namespace lava {

struct VqaTrainOptions {
  VqaDataOptions data;
  VqaConfig model;  // attention variant and sizes; vocabulary and feature sizes come from the data
  ObjectiveOptions objective;
  int epochs = 10;
  int64_t max_steps = 0;   // stop after this many updates (0 = no limit)
  double max_minutes = 0;  // stop after this much training time (0 = no limit)
  int batch_size = 32;
  int eval_batch_size = 256;
  double lr = 2e-3, clip = 5, init = 0.3, lr_decay = 0.5;
  int start_decay_at = 2;
  int patience = 0;          // stop after this many epochs without improvement (0 = never)
  std::string save;          // best checkpoint path ("" = none)
  std::string plot_dir;      // learning curves each epoch, attention pictures of the best model at the end ("" = none)
  int plot_questions = 6;    // how many validation questions get an attention picture
  uint64_t seed = 1;
  OutputFormat format = OutputFormat::table;
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
  std::vector<VqaEpochRecord> history;
};

// The per-question validation criterion (larger is better) of a variant; the accuracy when no validation answer
// has a likelihood (all unseen in training).
double vqa_valid_criterion(AttnVariant v, const VqaEvalFigures& f);

VqaTrainSummary train_vqa(const VqaTrainOptions& opt);

}  // namespace lava
