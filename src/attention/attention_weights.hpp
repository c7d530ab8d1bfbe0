#pragma once
// The attention weights w (B, T, S) with which a variant's output head reads the memory when no sample is drawn:
// training for the deterministic variants, and evaluation, decoding and pictures for every variant that is not
// enumerated. f then sees act(A_q + Σ_i w_i U_i) (attention/output_head.hpp).
//   none, soft, bam-*, gauss-ctx   w = p = softmax(s)   (BAM: the posterior mean; gauss-ctx: the context's mean)
//   var-dirichlet                  w = α_p / Σ α_p, the prior's mean, α = transform(s) (dirichlet_alpha)
//   sigmoid                        w_i = sigmoid(s_i)   (unnormalised; padding gets sigmoid(kMaskedLogit) = 0)
//   structured                     w_i = λ p(z_i = 1) / Σ_j p(z_j = 1), the marginals of a binary linear-chain
//                                  CRF with unaries θ_i(1) = 30 tanh(s_i / 30) (a smooth bound that keeps the
//                                  marginals representable in float), θ_i(0) = 0 and pairwise scores b (2, 2) over
//                                  the real positions of each query's row (Kim et al. 2017 §3.1, paper-notes §8; no
//                                  start/end scores)
// s are the prior's scores before its softmax (AttentionDists::scores), padding at kMaskedLogit.
#include "attention/objective.hpp"

namespace lava {

constexpr float kStructuredBound = 30.f;  // |θ_i(1)| < 30 for the structured CRF's unaries

Var<float> attention_weights(AttnVariant v, const AttentionDists& d);

// Dirichlet concentrations from scores (..., S): exp(10 tanh(s/10)) (the authors' exp(clamp(s, −10, 10)) with a
// smooth clamp, so the gradient never vanishes at the bounds; padding gets e^{−10} as in their code) or
// softplus(s) + e^{−10}.
Var<float> dirichlet_alpha(Var<float> scores, const VariantConfig& cfg);

// Real source positions per query row of scores (B, T, S): the count of entries above kMaskedLogit / 2 (padding is a
// suffix of each row). (B·T)
std::vector<int32_t> real_lengths(Var<float> scores);

}  // namespace lava
