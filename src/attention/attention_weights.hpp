#pragma once
// The attention weights w (B, T, S) with which a variant's output head reads the memory when no sample is drawn:
// training for the deterministic variants, and evaluation, decoding and pictures for every variant that is not
// enumerated (AttentionVariant::weights; the prior p = softmax(s) unless the variant says otherwise). f then sees
// act(A_q + Σ_i w_i U_i) (attention/output_head.hpp). s are the prior's scores before its softmax
// (AttentionDists::scores), padding at kMaskedLogit.
#include "attention/objective.hpp"

namespace lava {

Var<float> attention_weights(AttnVariant v, const AttentionDists& d);

// Dirichlet concentrations from scores (..., S): exp(10 tanh(s/10)) (the authors' exp(clamp(s, −10, 10)) with a
// smooth clamp, so the gradient never vanishes at the bounds; padding gets e^{−10} as in their code) or
// softplus(s) + e^{−10}.
Var<float> dirichlet_alpha(Var<float> scores, const VariantConfig& cfg);

// Real source positions per query row of scores (B, T, S): the count of entries above kMaskedLogit / 2 (padding is a
// suffix of each row). (B·T)
std::vector<int32_t> real_lengths(Var<float> scores);

}  // namespace lava
