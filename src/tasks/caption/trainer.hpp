#pragma once
// Training of the captioner (lava train --task caption) through the training loop of train/loop.hpp: the loss is
// −(objective − λ · penalty) per reference word, one JSON line per validation. Dropout and sampling draw update t's
// randomness from CounterRng(seed, "caption/train").child(t); the batches of epoch e are caption_train_batches.
// A variant's moving-average reward baseline lives in the parameter store (CaptionModel::sat_baseline), so
// checkpoints and the resume state carry it. The validation criterion is the bound the variant trains, per word
// (valid_criterion).
#include <cstdint>
#include <string>

#include "tasks/caption/eval.hpp"
#include "train/choice_row.hpp"
#include "train/loop_options.hpp"
#include "train/option_row.hpp"
#include "train/train_result.hpp"

namespace lava {

struct CaptionTrainOptions {
  std::string data_dir, mnist_dir;
  CaptionConfig model;
  CaptionObjective objective;
  TrainLoopOptions loop = [] {
    TrainLoopOptions o;
    o.lr = 2e-3, o.init = 0.3;  // at 0.1 the attention stays near uniform for 10 epochs (README)
    return o;
  }();
  int eval_batch_size = 128;
};

// The model's size options (CaptionConfig): `lava train --task caption` adds them, and they are part of a run's identity.
const OptionTable<CaptionConfig>& caption_model_options();
// Its choice option, the attention variant, likewise.
const ChoiceTable<CaptionConfig>& caption_choice_options();

TrainResult train_caption(const CaptionTrainOptions& opt);

}  // namespace lava
