// Categorical latent alignments trained on one sample per query, z ~ r with r = p (hard attention) or
// r = q(z | x, y) (variational attention), by REINFORCE with the soft-attention baseline B = log f(x, E_p[z])
// (paper eq. 1): the score-function term (log f(x, z) − B) ∇ log r(z) enters through a surrogate whose value is
// advantage · log r(z). The variational one adds the analytic −KL(q‖p).
//   hard-sample   Σ_n log f(x, e_z)                      z ~ p
//   var-sample    Σ_n log f(x, e_z) − KL(q‖p)            z ~ q
// Crosscheck noise (ObjectiveOptions::noise_out): the drawn z, one per query.
#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

class ScoreFunction : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions& opt) const override {
    Tape<float>& tape = c.tape;
    const Shape sdist = d.log_prior.shape();
    const int64_t S = sdist[-1], N = sdist.numel() / S;
    const bool var = info().uses_q;
    Var<float> log_r = var ? d.log_q : d.log_prior;
    std::vector<int32_t> z(static_cast<size_t>(N));
    sample_categorical(log_r.val(), N, S, c.next_rng(), 1, 0, z.data());
    if (opt.noise_out) opt.noise_out->assign(z.begin(), z.end());
    Var<float> lf = head.log_f_weighted(c, one_hot(tape, sdist, z.data()), t.y);
    std::vector<float> advantage(static_cast<size_t>(N));
    {
      NoGrad<float> no_grad(tape);
      Var<float> baseline = head.log_f_weighted(c, exp(d.log_prior), t.y);
      for (int64_t n = 0; n < N; ++n) advantage[size_t(n)] = lf.val()[n] - baseline.val()[n];
    }
    Var<float> surrogate = mul(constant(tape, sdist.without(-1), advantage.data()), pick(log_r, z.data()));
    Var<float> value = lf, kl;
    if (var) {
      kl = kl_categorical(d.log_q, d.log_prior);
      value = sub(lf, kl);
    }
    return masked_terms(add(value, surrogate), value, kl, t);
  }
};

}  // namespace

const AttentionVariant& hard_sample_attention() {
  static const ScoreFunction v({.name = "hard-sample",
                                .summary = "z ~ p; one sample, REINFORCE with the soft-attention baseline",
                                .tasks = "nmt vqa caption",
                                .latent = true,
                                .crosscheck = true,
                                .paper = {.rank = 4,
                                          .model = "Hard Attention",
                                          .objective = "E_p[log p]",
                                          .estimator = "Sample",
                                          .nmt_ppl = 7.38,
                                          .nmt_bleu = 31.00,
                                          .nmt_entropy = 0.07,
                                          .nmt_ppl_kmax = 7.38,
                                          .nmt_bleu_kmax = 31.04,
                                          .vqa_nll = 1.82,
                                          .vqa_eval = 56.30,
                                          .vqa_entropy = 0.58}});
  return v;
}

const AttentionVariant& var_sample_attention() {
  static const ScoreFunction v({.name = "var-sample",
                                .summary = "z ~ q; one sample, REINFORCE with the soft baseline, analytic KL",
                                .tasks = "nmt vqa caption",
                                .options = "warm-start",
                                .uses_q = true,
                                .latent = true,
                                .marginal_warm_start = true,
                                .crosscheck = true,
                                .paper = {.rank = 7,
                                          .model = "Variational Attention",
                                          .objective = "E_q[log p] − KL",
                                          .estimator = "Sample",
                                          .nmt_ppl = 6.17,
                                          .nmt_bleu = 33.30,
                                          .nmt_entropy = 0.52,
                                          .nmt_ppl_kmax = 6.51,
                                          .nmt_bleu_kmax = 33.27,
                                          .vqa_nll = 1.75,
                                          .vqa_eval = 57.52,
                                          .vqa_entropy = 2.44,
                                          .inference_rank = 2}});
  return v;
}

}  // namespace lava
