// Gaussian context attention, gauss-ctx (Bahuleyan et al. 2018; src/method.md §2.3): per query (B·T of them, S
// positions, Hd = the head's memory width)
//   c ~ N(μ, diag σ²) in the head's memory space, μ = Σ_i p_i U_i (the soft context),
//   log σ = W2 tanh(W1 μ + b1) + b2; prior N(mean_i U_i, I) over the real positions, or N(0, I) ("zero");
//   objective log f(x, c) − w·KL(N(μ, σ²) ‖ prior), w = --att-kl (default 0.1, as Bahuleyan et al.) × ramp.
// Evaluation draws c_k = μ + σ ε with the importance ratio log N(c_k; m, I) − log N(c_k; μ, σ²)
//   = Σ_h −(c_h − m_h)²/2 + log σ_h + ε_h²/2   (the 2π terms cancel).
// Without a draw the head reads the prior p (the mean context's weights).
#include <algorithm>
#include <cmath>

#include "attention/variants/continuous.hpp"
#include "prob/gaussian.hpp"

namespace lava {

namespace {

struct GaussianPosterior {
  RealPositions pos;
  Var<float> mu, sigma, mu_p;  // (B, T, Hd); mu_p a scalar 0 for the zero prior
};

class GaussianContext : public ContinuousLatent {
 public:
  using ContinuousLatent::ContinuousLatent;

  ContinuousTerms terms(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                        const ObjectiveOptions& opt) const override {
    const GaussianPosterior P = build(c, head, d);
    Var<float> lf = head.log_f_context(c, gaussian_sample(P.mu, P.sigma, c.next_rng()), y);
    return kl_weighted_terms(lf, analytic_kl(c, P), kl_weight(opt));
  }

  AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                             const float* token_mask, int) const override {
    const GaussianPosterior P = build(c, head, d);
    const Shape ctx_shape = P.mu.shape();  // a copy: the next node may move the tape's node list
    const int64_t Hd = ctx_shape[-1], n = ctx_shape.numel();
    Var<float> kl = analytic_kl(c, P);
    const bool zero_prior = P.mu_p.numel() == 1;
    std::vector<float> buf(static_cast<size_t>(n));  // (B, T, Hd) the drawn contexts
    return importance_eval(c, head, d, y, token_mask, kl, [&](const CounterRng& rng, std::vector<double>& ratio) {
      const float *mu = P.mu.val(), *sigma = P.sigma.val(), *mu_p = P.mu_p.val();
      for (int64_t i = 0; i < n; ++i) {
        const double e = rng.normal(uint64_t(i)), ctx = double(mu[i]) + double(sigma[i]) * e;
        const double m = zero_prior ? double(mu_p[0]) : double(mu_p[i]);
        buf[size_t(i)] = float(ctx);  // log N(ctx; m, 1) − log N(ctx; μ, σ)
        ratio[size_t(i / Hd)] += -0.5 * (ctx - m) * (ctx - m) + std::log(double(sigma[i])) + 0.5 * e * e;
      }
      return head.log_f_context(c, c.tape.input(ctx_shape, buf.data()), y);
    });
  }

  void declare_params(ParamStore<float>& ps, const VariantConfig&, int Hd, VariantParamIds& ids) const override {
    ids.sigma_W1 = ps.add("attn/sigma/W1", Shape{Hd, Hd});
    ids.sigma_b1 = ps.add("attn/sigma/b1", Shape{Hd});
    ids.sigma_W2 = ps.add("attn/sigma/W2", Shape{Hd, Hd});
    ids.sigma_b2 = ps.add("attn/sigma/b2", Shape{Hd});
  }

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    ContinuousLatent::write_config(cfg, meta);
    meta["gauss-prior"] = cfg.gauss_prior;
  }

 protected:
  float default_kl_weight() const override { return 0.1f; }

 private:
  static GaussianPosterior build(Ctx& c, const OutputHead& head, const AttentionDists& d) {
    GaussianPosterior P;
    P.pos = real_positions(c, d);
    const VariantVars& x = d.extra;
    P.mu = matmul(exp(d.log_prior), head.memory);  // (B, T, Hd)
    P.sigma = exp(add(matmul(tanh(add(matmul(P.mu, x.sigma_W1), x.sigma_b1)), x.sigma_W2), x.sigma_b2));
    if (x.cfg.gauss_prior == "zero") {
      P.mu_p = c.tape.full(Shape{}, 0.f);
    } else {  // the mean of the memory's real positions, per query: uniform weights (B, T, S) times U
      const Shape shape = P.pos.shape;
      const int64_t n = shape.numel(), S = shape[-1];
      std::vector<float> u(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        u[size_t(i)] = P.pos.real_host[size_t(i)] / float(std::max(1, P.pos.len[size_t(i / S)]));
      P.mu_p = matmul(c.tape.input(shape, u.data()), head.memory);
    }
    return P;
  }

  // KL(N(μ, σ²) ‖ N(m, I)) per query: (B, T).
  static Var<float> analytic_kl(Ctx& c, const GaussianPosterior& P) {
    return sum(kl_gaussian(P.mu, P.sigma, P.mu_p, c.tape.full(Shape{}, 1.f)), -1);
  }
};

}  // namespace

const AttentionVariant& gauss_ctx_attention() {
  static const GaussianContext v({.name = "gauss-ctx",
                                  .summary = "context ~ N(soft context, sigma^2), reparameterised; KL to N(mean, I)",
                                  .options = "eval-samples att-kl att-kl-anneal gauss-prior",
                                  .sampled = true});
  return v;
}

}  // namespace lava
