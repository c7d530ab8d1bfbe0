// Dirichlet attention, var-dirichlet (src/method.md §2.3): per query (B·T of them, S positions)
//   z ~ Dir(α_q), α_q = dirichlet_alpha(q's scores), prior Dir(α_p), α_p = dirichlet_alpha(the prior's scores);
//   f reads X z; objective E_q log f(x, z) − KL(Dir(α_q) ‖ Dir(α_p)) with one reparameterised draw, always at KL
//   weight 1 (--att-kl does not apply). --warm-start: first the Jensen bound E_{Dir(α_p)} log f with z from the
//   prior, as the authors needed.
// Evaluation draws z_k ~ Dir(α_q) through Gamma variates, z = G / Σ G, with the importance ratio
//   log Dir(z; α_p) − log Dir(z; α_q) = Σ_s (α_p,s − α_q,s) log z_s − log Γ(α_p,s) + log Γ(α_q,s)
//                                     + log Γ(Σ α_p) − log Γ(Σ α_q).
// Without a draw the head reads the prior's mean, α_p / Σ α_p.
#include <algorithm>
#include <cmath>

#include "attention/attention_weights.hpp"
#include "attention/variants/continuous.hpp"
#include "prob/dirichlet.hpp"
#include "prob/gamma.hpp"

namespace lava {

namespace {

struct DirichletPosterior {
  RealPositions pos;
  Var<float> alpha_q, alpha_p;  // (B, T, S)
};

class DirichletLatent : public ContinuousLatent {
 public:
  using ContinuousLatent::ContinuousLatent;

  Var<float> weights(const AttentionDists& d) const override {
    return softmax(log(dirichlet_alpha(d.scores, d.extra.cfg)), -1);
  }

  float kl_weight(const ObjectiveOptions&) const override { return 1.f; }  // always the ELBO: --att-kl does not apply

  ContinuousTerms terms(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                        const ObjectiveOptions& opt) const override {
    const DirichletPosterior P = build(c, d);
    const bool warm = opt.step < opt.warm_start;
    Var<float> lf = head.log_f_weighted(c, dirichlet_sample(warm ? P.alpha_p : P.alpha_q, c.next_rng()), y);
    if (warm) {  // the Jensen bound E_{Dir(α_p)} log f: no inference network yet
      ContinuousTerms t;
      t.per_token = t.value = lf;
      return t;
    }
    return kl_weighted_terms(lf, kl_dirichlet(P.alpha_q, P.alpha_p), kl_weight(opt));
  }

  AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                             const float* token_mask, int) const override {
    const DirichletPosterior P = build(c, d);
    const Shape shape = P.pos.shape;
    const int64_t S = shape[-1], N = shape.numel() / S;
    Var<float> kl = kl_dirichlet(P.alpha_q, P.alpha_p);
    std::vector<float> buf(size_t(shape.numel()));  // (B, T, S) the drawn z
    std::vector<double> log_s(static_cast<size_t>(S));
    return importance_eval(c, head, d, y, token_mask, kl, [&](const CounterRng& rng, std::vector<double>& ratio) {
      const float *alpha_q = P.alpha_q.val(), *alpha_p = P.alpha_p.val();
      for (int64_t q = 0; q < N; ++q) {
        for (int64_t s = 0; s < S; ++s)  // all S coordinates (padding has α = e^{−10} on both sides)
          log_s[size_t(s)] = gamma_log_draw(double(alpha_q[q * S + s]), rng, uint64_t(q * S + s));
        normalise_log_weights(log_s, *std::max_element(log_s.begin(), log_s.end()), buf.data() + q * S);
        double a_q0 = 0, a_p0 = 0;
        for (int64_t s = 0; s < S; ++s) {
          const double aq = alpha_q[q * S + s], ap = alpha_p[q * S + s];
          ratio[size_t(q)] += (ap - aq) * log_s[size_t(s)] - std::lgamma(ap) + std::lgamma(aq);
          a_q0 += aq, a_p0 += ap;
        }
        ratio[size_t(q)] += std::lgamma(a_p0) - std::lgamma(a_q0);
      }
      return head.log_f_weighted(c, c.tape.input(shape, buf.data()), y);
    });
  }

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    ContinuousLatent::write_config(cfg, meta);
    meta["alpha-transform"] = cfg.alpha_transform;
  }

 private:
  static DirichletPosterior build(Ctx& c, const AttentionDists& d) {
    DirichletPosterior P;
    P.pos = real_positions(c, d);
    P.alpha_q = dirichlet_alpha(d.q_scores, d.extra.cfg);
    P.alpha_p = dirichlet_alpha(d.scores, d.extra.cfg);
    return P;
  }
};

}  // namespace

const AttentionVariant& var_dirichlet_attention() {
  static const DirichletLatent v(
      {.name = "var-dirichlet",
       .summary = "relaxed z ~ Dir(alpha_q), reparameterised (implicit gamma gradients); ELBO with KL(Dir||Dir)",
       .options = "warm-start eval-samples alpha-transform",
       .uses_q = true,
       .sampled = true,
       .paper = {.rank = 5,
                 .model = "Variational Relaxed Attention",
                 .objective = "E_q[log p] − KL",
                 .estimator = "Sample",
                 .nmt_ppl = 7.58,
                 .nmt_bleu = 30.05,
                 .nmt_entropy = 2.02}});
  return v;
}

}  // namespace lava
