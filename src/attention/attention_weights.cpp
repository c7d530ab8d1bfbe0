#include "attention/attention_weights.hpp"

#include <cmath>

#include "attention/attention_variant.hpp"

namespace lava {

std::vector<int32_t> real_lengths(Var<float> scores) {
  const int64_t S = scores.dim(-1), N = scores.numel() / S;
  std::vector<int32_t> len(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    int32_t l = 0;
    while (l < S && scores.val()[n * S + l] > kMaskedLogit / 2) ++l;
    len[size_t(n)] = l;
  }
  return len;
}

Var<float> dirichlet_alpha(Var<float> scores, const VariantConfig& cfg) {
  if (cfg.alpha_transform == "softplus") return affine(softplus(scores), 1.f, std::exp(-10.f));
  return exp(affine(tanh(affine(scores, 0.1f, 0.f)), 10.f, 0.f));
}

Var<float> attention_weights(AttnVariant v, const AttentionDists& d) { return v->weights(d); }

}  // namespace lava
