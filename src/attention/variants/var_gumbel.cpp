// Variational attention with a relaxed sample (Gumbel-softmax), var-gumbel:
//   z̃ = softmax((log q + g) / τ), g_s = −log(−log u_s), a reparameterised relaxed sample of q(z | x, y);
//   objective log f(x, X z̃) − KL(q‖p) with the analytic categorical KL; τ = --temperature.
// Crosscheck noise (ObjectiveOptions::noise_out): the Gumbel draws g, one per query and position.
#include <cmath>

#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

class VarGumbel : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions& opt) const override {
    const Shape sdist = d.log_prior.shape();
    const int64_t N = sdist.numel() / sdist[-1], S = sdist[-1];
    std::vector<float> g(static_cast<size_t>(N * S));
    const CounterRng rng = c.next_rng();
    for (int64_t i = 0; i < N * S; ++i) g[size_t(i)] = float(-std::log(-std::log(rng.uniform(uint64_t(i)))));
    if (opt.noise_out) opt.noise_out->assign(g.begin(), g.end());
    Var<float> relaxed =
        softmax(affine(add(d.log_q, constant(c.tape, sdist, g.data())), 1.f / opt.temperature, 0.f), -1);
    Var<float> kl = kl_categorical(d.log_q, d.log_prior);
    Var<float> per_token = sub(head.log_f_weighted(c, relaxed, t.y), kl);
    return masked_terms(per_token, per_token, kl, t);
  }
};

}  // namespace

const AttentionVariant& var_gumbel_attention() {
  static const VarGumbel v({.name = "var-gumbel",
                            .summary = "relaxed z = softmax((log q + g)/tau), reparameterised, analytic KL",
                            .options = "temperature warm-start",
                            .uses_q = true,
                            .latent = true,
                            .marginal_warm_start = true,
                            .crosscheck = true,
                            .paper = {.rank = 8,
                                      .model = "Variational Attention (Gumbel-softmax)",
                                      .objective = "E_q[log p] − KL",
                                      .estimator = "Relaxed",
                                      .nmt_ppl = 6.51,
                                      .nmt_bleu = 33.08,
                                      .inference_rank = 4,
                                      .inference_note = "relaxes at τ = {temperature}"}});
  return v;
}

}  // namespace lava
