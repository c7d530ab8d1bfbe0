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
                             .crosscheck = true,
                             .paper = {.rank = 2,
                                       .model = "Marginal Likelihood",
                                       .objective = "log E[p]",
                                       .estimator = "Enum",
                                       .nmt_ppl = 6.34,
                                       .nmt_bleu = 33.29,
                                       .nmt_entropy = 0.82,
                                       .nmt_ppl_kmax = 6.90,
                                       .nmt_bleu_kmax = 33.31,
                                       .vqa_nll = 1.69,
                                       .vqa_eval = 60.33,
                                       .vqa_entropy = 2.66}},
                            EnumeratedObjective::marginal);
  return v;
}

const AttentionVariant& hard_enum_attention() {
  static const Enumerated v({.name = "hard-enum",
                             .summary = "z ~ p; Jensen bound sum_i p_i log f_i, enumerated",
                             .tasks = "nmt vqa caption",
                             .latent = true,
                             .crosscheck = true,
                             .paper = {.rank = 3,
                                       .model = "Hard Attention",
                                       .objective = "E_p[log p]",
                                       .estimator = "Enum",
                                       .nmt_ppl = 7.37,
                                       .nmt_bleu = 31.40,
                                       .nmt_entropy = 0.05,
                                       .nmt_ppl_kmax = 7.37,
                                       .nmt_bleu_kmax = 31.37,
                                       .vqa_nll = 1.78,
                                       .vqa_eval = 57.60,
                                       .vqa_entropy = 0.73}},
                            EnumeratedObjective::expected);
  return v;
}

const AttentionVariant& var_enum_attention() {
  static const Enumerated v({.name = "var-enum",
                             .summary = "z ~ q(z|x,y); exact ELBO sum_i q_i log f_i - KL(q||p)",
                             .tasks = "nmt vqa caption",
                             .options = "warm-start",
                             .uses_q = true,
                             .latent = true,
                             .marginal_warm_start = true,
                             .crosscheck = true,
                             .paper = {.rank = 6,
                                       .model = "Variational Attention",
                                       .objective = "E_q[log p] − KL",
                                       .estimator = "Enum",
                                       .nmt_ppl = 6.08,
                                       .nmt_bleu = 33.68,
                                       .nmt_entropy = 0.54,
                                       .nmt_ppl_kmax = 6.42,
                                       .nmt_bleu_kmax = 33.69,
                                       .vqa_nll = 1.69,
                                       .vqa_eval = 58.44,
                                       .vqa_entropy = 2.07,
                                       .inference_rank = 1}},
                            EnumeratedObjective::expected);
  return v;
}

}  // namespace lava
