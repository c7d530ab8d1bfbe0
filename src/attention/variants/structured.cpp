// Structured attention (Kim et al. 2017 §3.1), `structured`: a binary linear-chain CRF over the real positions of
// each query's row, with unaries θ_i(1) = B tanh(s_i / B), θ_i(0) = 0 (B = kStructuredBound) and pairwise scores
// b (2, 2), a parameter of the model (no start/end scores). f reads the context Σ_i λ p(z_i = 1) U_i / Σ_j p(z_j = 1)
// (λ = --crf-lambda) and trains log f itself, with an L2 penalty --crf-l2 on b. The weights do not sum to 1, so
// K-max does not apply.
#include <fmt/format.h>

#include "attention/attention_variant.hpp"
#include "attention/attention_weights.hpp"
#include "attention/objective_parts.hpp"
#include "prob/linear_chain_crf.hpp"

namespace lava {

namespace {

constexpr float kStructuredBound = 30.f;  // |θ_i(1)| < 30: the marginals stay representable in float

class Structured : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  // w = λ p(z_i = 1) / Σ_j p(z_j = 1) per row: (B, T, S).
  Var<float> weights(const AttentionDists& d) const override {
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

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions& opt) const override {
    ObjectiveTerms out = direct_objective(c, head, weights(d), t);
    if (opt.crf_l2 > 0) {
      // L2 on the pairwise scores, crf_l2 · ‖b‖² per sentence (the trainer divides the objective by the batch rows).
      const float rows = float(d.log_prior.dim(0));
      out.objective = sub(out.objective, affine(sum_all(square(d.extra.crf_pairwise)), opt.crf_l2 * rows, 0.f));
    }
    return out;
  }

  void declare_params(ParamStore<float>& ps, const VariantConfig&, int, VariantParamIds& ids) const override {
    ids.crf_pairwise = ps.add("attn/crf/pairwise", Shape{2, 2});
  }

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    meta["crf-lambda"] = fmt::format("{}", cfg.crf_lambda);
  }
};

}  // namespace

const AttentionVariant& structured_attention() {
  static const Structured v({.name = "structured",
                             .summary = "binary linear-chain CRF over positions; context from its marginals",
                             .options = "crf-lambda crf-l2",
                             .trains_likelihood = true,
                             .kmax = false,
                             .decodes_prior = false,
                             .weights_normalised = false});
  return v;
}

}  // namespace lava
