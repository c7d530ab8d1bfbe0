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
#include "train/choice_row.hpp"
#include "train/loop_options.hpp"
#include "train/option_row.hpp"
#include "train/train_result.hpp"

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

// The per-question validation criterion (larger is better) of a variant; the accuracy when no validation answer
// has a likelihood (all unseen in training).
double vqa_valid_criterion(AttnVariant v, const VqaEvalFigures& f);

// The model's size options (VqaConfig): `lava train --task vqa` adds them, and they are part of a run's identity.
const OptionTable<VqaConfig>& vqa_model_options();
// Its choice option, the attention variant, likewise.
const ChoiceTable<VqaConfig>& vqa_choice_options();

TrainResult train_vqa(const VqaTrainOptions& opt);

}  // namespace lava
