// The categorical latent alignments trained by enumerating every position (paper Table 1), z ~ p(z | x, x̃):
//   marginal    log Σ_i p(z=i) f(x, e_i)                 the exact marginal likelihood
//   hard-enum   Σ_i p(z=i) log f(x, e_i)                 hard attention's Jensen bound
//   var-enum    Σ_i q_i log f(x, e_i) − KL(q‖p)          variational attention's exact ELBO, q = q(z | x, y)
// The enumerated output layer and its reduction over positions are one op (its gradient is formed in the forward
// pass), weighted by the token mask.
#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

class Enumerated : public AttentionVariant {
 public:
  Enumerated(const AttnVariantInfo& info, EnumeratedObjective reduce) : AttentionVariant(info), reduce_(reduce) {}

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions&) const override {
    const int64_t N = d.log_prior.numel() / d.log_prior.dim(-1);
    const bool var = info().uses_q;
    std::vector<float> phi(static_cast<size_t>(N));
    ObjectiveTerms out;
    out.objective = head.enumerated_objective(c, t.y, var ? d.log_q : d.log_prior, t.token_mask, reduce_, phi.data());
    out.value_sum = masked_sum(phi.data(), t.token_mask, N);
    if (var) {
      Var<float> kl = kl_categorical(d.log_q, d.log_prior);
      out.objective = sub(out.objective, sum_all(mul(kl, t.mask)));
      out.kl_sum = masked_sum(kl, t.token_mask);
      out.value_sum -= out.kl_sum;
    }
    return out;
  }

 private:
  EnumeratedObjective reduce_;
};

}  // namespace

const AttentionVariant& marginal_attention() {
  static const Enumerated v({.name = "marginal",
                             .summary = "z ~ p categorical; exact log sum_i p_i f_i by enumeration",
                             .tasks = "nmt vqa caption",
                             .latent = true,
                             .trains_likelihood = true,
                             .crosscheck = true},
                            EnumeratedObjective::marginal);
  return v;
}

const AttentionVariant& hard_enum_attention() {
  static const Enumerated v({.name = "hard-enum",
                             .summary = "z ~ p; Jensen bound sum_i p_i log f_i, enumerated",
                             .tasks = "nmt vqa caption",
                             .latent = true,
                             .crosscheck = true},
                            EnumeratedObjective::expected);
  return v;
}

const AttentionVariant& var_enum_attention() {
  static const Enumerated v({.name = "var-enum",
                             .summary = "z ~ q(z|x,y); exact ELBO sum_i q_i log f_i - KL(q||p)",
                             .tasks = "nmt vqa caption",
                             .uses_q = true,
                             .latent = true,
                             .marginal_warm_start = true,
                             .crosscheck = true},
                            EnumeratedObjective::expected);
  return v;
}

}  // namespace lava
