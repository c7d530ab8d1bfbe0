#pragma once
// Beam search for the captioner: K hypotheses per scene, each step's word distribution the model's exact marginal
// over regions (the soft context's f for soft; CaptionModel::next_word_log_probs). Every step, each live hypothesis
// proposes its K best words and the K best candidates by accumulated log-probability are kept; a candidate ending in
// </s> is finished and leaves the beam. The search stops when the best candidate is finished, none is live, or at
// max_len words; finished captions are ranked by log-probability / length^alpha (length counting </s>). <pad>,
// <bos> and <unk> are never produced; ties go to the lower hypothesis, then the lower word id. K = 1 is greedy.
#include <array>
#include <cstdint>
#include <vector>

#include "tasks/caption/model.hpp"

namespace lava {

struct CaptionDecodeOptions {
  int beam = 5;
  double alpha = 1.0;
  int max_len = 40;
};

struct DecodedCaption {
  std::vector<int32_t> tokens;  // without </s>
  std::vector<int8_t> region;   // per token: the argmax of α_t when it was produced
  std::vector<std::array<float, kSceneRegions>> attention;  // per token: α_t (the pictures)
  double log_prob = 0;
};

// features: (S, D) of one scene. No gradient (the model's parameters are only read); independent of the thread count.
DecodedCaption decode_caption(CaptionModel& model, const float* features, const CaptionDecodeOptions& opt);

}  // namespace lava
