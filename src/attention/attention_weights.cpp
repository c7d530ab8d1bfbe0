#include "attention/attention_weights.hpp"

#include <cmath>

#include "core/check.hpp"
#include "prob/linear_chain_crf.hpp"

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

namespace {

// w = λ p(z_i = 1) / Σ_j p(z_j = 1) per row: (B, T, S).
Var<float> structured_weights(const AttentionDists& d) {
  const Shape s = d.scores.shape();
  const int64_t S = s[-1], N = s.numel() / S;
  Tape<float>& tape = *d.scores.tape;
  // Unaries (N, S, 2): θ_i(0) = 0, θ_i(1) = B tanh(s_i / B), the score bounded smoothly to ±B. Unbounded, a row
  // whose scores are all below about −88 has every p(z_i = 1) underflow in float and λ/Σp overflow; bounded, the
  // marginals stay near e^{−B} or above (the L2 penalty keeps the pairwise scores small). Padding stays at −B.
  Var<float> on = reshape(affine(tanh(affine(d.scores, 1.f / kStructuredBound, 0.f)), kStructuredBound, 0.f),
                          Shape{N, S, 1});
  Var<float> unary = concat({tape.full(Shape{N, S, 1}, 0.f), on}, 2);
  const std::vector<int32_t> len = real_lengths(d.scores);
  Var<float> p1 = slice(crf_marginals(unary, d.extra.crf_pairwise, len.data()), 2, 1, 1);  // (N, S, 1)
  // The row normaliser λ / Σ_i p_i as a (N, 1, 1) batched product, since binary ops broadcast suffixes only.
  Var<float> total = matmul(reshape(p1, Shape{N, 1, S}), tape.full(Shape{S, 1}, 1.f));  // (N, 1, 1)
  Var<float> scale = div(tape.full(Shape{N, 1, 1}, d.extra.cfg.crf_lambda), total);
  return reshape(matmul(scale, reshape(p1, Shape{N, 1, S})), s);
}

}  // namespace

Var<float> attention_weights(AttnVariant v, const AttentionDists& d) {
  switch (v) {
    case AttnVariant::sigmoid:
      return sigmoid(d.scores);
    case AttnVariant::structured:
      return structured_weights(d);
    case AttnVariant::var_dirichlet:
      return softmax(log(dirichlet_alpha(d.scores, d.extra.cfg)), -1);
    case AttnVariant::none:
    case AttnVariant::soft:
    case AttnVariant::marginal:
    case AttnVariant::hard_enum:
    case AttnVariant::hard_sample:
    case AttnVariant::var_enum:
    case AttnVariant::var_sample:
    case AttnVariant::var_gumbel:
    case AttnVariant::var_rws:
    case AttnVariant::gauss_ctx:
    case AttnVariant::bam_weibull:
    case AttnVariant::bam_lognormal:
      return exp(d.log_prior);
  }
  LAVA_CHECK(false, "unknown attention variant {}", int(v));
  return {};
}

}  // namespace lava
