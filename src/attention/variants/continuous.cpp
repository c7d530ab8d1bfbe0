// The sampled attention variants: a continuous random object per query, reparameterised, with an
// analytic KL to its prior. Per query (B·T of them, S positions, Hd = the head's memory width):
//   var-dirichlet  z ~ Dir(α_q), α_q = dirichlet_alpha(q's scores), prior Dir(α_p); f reads X z
//                  objective E_q log f(x, z) − KL(Dir(α_q) ‖ Dir(α_p))  (one sample; --warm-start: first the
//                  Jensen bound E_{Dir(α_p)} log f with z from the prior, as the authors needed)
//   gauss-ctx      c ~ N(μ, diag σ²) in the head's memory space, μ = Σ_i p_i U_i (the soft context),
//                  log σ = W2 tanh(W1 μ + b1) + b2; prior N(mean_i U_i, I) or N(0, I) (Bahuleyan et al. 2018)
//   bam-weibull    S_i ~ Weibull(k, λ_i), λ_i = p_i / Γ(1 + 1/k) so E S_i = p_i; w = S / Σ S;
//                  prior Gamma(α_i, β): α_i = β π_i (contextual) or α (fixed)              (Fan et al. 2020)
//   bam-lognormal  log S_i ~ N(log p_i − σ_q²/2, σ_q²); w = S / Σ S = softmax(log p + σ_q ε);
//                  prior log S_i ~ N(log π_i or 0, σ_p²)
// with p = the prior's softmax and π = softmax_i g(U_i) the contextual prior (attention/variant_params.hpp).
// gauss-ctx and bam-* train log f − w·KL with w = --att-kl (default 0.1 for gauss-ctx, as Bahuleyan et al.; 1 for
// BAM) times an optional tanh ramp; every reported ELBO uses weight 1, so it is a true lower bound.
//
// Evaluation draws K = eval_samples latents per query from the posterior and reports, per token,
//   log p̂(y|x) = log (1/K) Σ_k f(x, z_k)_y p(z_k) / q(z_k)   (importance-weighted; E log p̂ ≤ log p(y|x), → as K grows)
//   ELBO ≈ (1/K) Σ_k log f(x, z_k)_y − KL(q ‖ p)               (analytic KL)
// so kl_gap = log p̂ − ELBO estimates KL(q ‖ p(z|x,y)); no exact posterior exists to check it against.
#include "attention/variants/continuous.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "attention/attention_variant.hpp"
#include "attention/attention_weights.hpp"
#include "attention/objective_parts.hpp"
#include "prob/dirichlet.hpp"
#include "prob/gamma.hpp"
#include "prob/gaussian.hpp"
#include "prob/lognormal.hpp"
#include "prob/weibull.hpp"

namespace lava {

namespace {

enum class Kind { dirichlet, gauss, weibull, lognormal };

constexpr int kPriorHidden = 10;  // BAM's --att_se_hid_size

// One batch's distributions, built the same way for training and evaluation.
struct Posterior {
  Shape shape;                 // (B, T, S)
  std::vector<uint8_t> pad;    // (B, T, S) 1 = padding
  Var<float> real;             // (B, T, S) 1 at real positions (constant)
  Var<float> alpha_q, alpha_p;  // var-dirichlet: (B, T, S)
  Var<float> mu, sigma, mu_p;   // gauss-ctx: (B, T, Hd)
  Var<float> phi;               // bam-*: log p with padding at 0, (B, T, S)
  Var<float> log_pi;            // bam-* contextual: log π gathered per query, padding at 0, (B, T, S)
};

// log π_i = log_softmax_i g(U_i) per batch row, repeated over the T queries: (B, T, S).
Var<float> contextual_log_prior(const OutputHead& head, const VariantVars& x, const Posterior& P) {
  const int64_t B = P.shape[0], T = P.shape[1], S = P.shape[2];
  Var<float> g = add(matmul(relu(add(matmul(head.memory, x.prior_W1), x.prior_b1)), x.prior_w2), x.prior_b2);
  std::vector<uint8_t> src_pad(size_t(B * S));  // the padding of each row's first query is its source's
  for (int64_t b = 0; b < B; ++b) std::copy_n(P.pad.data() + b * T * S, S, src_pad.data() + b * S);
  Var<float> log_pi = log_softmax(masked_fill(reshape(g, Shape{B, S}), src_pad.data(), Shape{B, S}, kMaskedLogit), -1);
  std::vector<int32_t> rows(size_t(B * T));
  for (int64_t n = 0; n < B * T; ++n) rows[size_t(n)] = int32_t(n / T);
  return masked_fill(embedding(log_pi, rows.data(), Shape{B, T}), P.pad.data(), P.shape, 0.f);
}

Posterior build(Ctx& c, Kind v, const OutputHead& head, const AttentionDists& d) {
  Posterior P;
  P.shape = d.log_prior.shape();
  const int64_t n = P.shape.numel(), S = P.shape[-1];
  P.pad.resize(size_t(n));
  std::vector<float> real(static_cast<size_t>(n));
  const std::vector<int32_t> len = real_lengths(d.scores);
  for (int64_t i = 0; i < n; ++i) {
    P.pad[size_t(i)] = (i % S) >= len[size_t(i / S)];
    real[size_t(i)] = P.pad[size_t(i)] ? 0.f : 1.f;
  }
  P.real = c.tape.input(P.shape, real.data());
  const VariantVars& x = d.extra;
  switch (v) {
    case Kind::dirichlet:
      P.alpha_q = dirichlet_alpha(d.q_scores, x.cfg);
      P.alpha_p = dirichlet_alpha(d.scores, x.cfg);
      break;
    case Kind::gauss: {
      P.mu = matmul(exp(d.log_prior), head.memory);  // (B, T, Hd)
      P.sigma = exp(add(matmul(tanh(add(matmul(P.mu, x.sigma_W1), x.sigma_b1)), x.sigma_W2), x.sigma_b2));
      if (x.cfg.gauss_prior == "zero") {
        P.mu_p = c.tape.full(Shape{}, 0.f);
      } else {  // the mean of the memory's real positions, per query: uniform weights (B, T, S) times U
        std::vector<float> u(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) u[size_t(i)] = real[size_t(i)] / float(std::max(1, len[size_t(i / S)]));
        P.mu_p = matmul(c.tape.input(P.shape, u.data()), head.memory);
      }
      break;
    }
    case Kind::weibull:
    case Kind::lognormal:
      P.phi = masked_fill(d.log_prior, P.pad.data(), P.shape, 0.f);
      if (x.cfg.bam_prior == "contextual") P.log_pi = contextual_log_prior(head, x, P);
      break;
  }
  return P;
}

// KL(q ‖ p) per query: (B, T).
Var<float> analytic_kl(Ctx& c, Kind v, const VariantConfig& cfg, const Posterior& P) {
  Tape<float>& tape = c.tape;
  switch (v) {
    case Kind::dirichlet:
      return kl_dirichlet(P.alpha_q, P.alpha_p);
    case Kind::gauss:
      return sum(kl_gaussian(P.mu, P.sigma, P.mu_p, tape.full(Shape{}, 1.f)), -1);
    case Kind::weibull: {
      const float k = cfg.k_weibull;
      Var<float> lambda = exp(affine(P.phi, 1.f, -std::lgamma(1.f + 1.f / k)));
      Var<float> beta = tape.full(Shape{}, cfg.beta_gamma);
      // Contextual α_i = β π_i (padding: π = 1, masked out below); fixed α.
      Var<float> alpha = P.log_pi.tape ? affine(exp(P.log_pi), cfg.beta_gamma, 0.f) : tape.full(Shape{}, cfg.alpha_gamma);
      return sum(mul(kl_weibull_gamma(tape.full(Shape{}, k), lambda, alpha, beta), P.real), -1);
    }
    case Kind::lognormal: {
      const float sq = cfg.sigma_q;
      Var<float> mu_q = affine(P.phi, 1.f, -0.5f * sq * sq);
      Var<float> mu_p = P.log_pi.tape ? P.log_pi : tape.full(Shape{}, 0.f);
      return sum(mul(kl_lognormal(mu_q, tape.full(Shape{}, sq), mu_p, tape.full(Shape{}, cfg.sigma_p)), P.real), -1);
    }
  }
  return {};
}

// BAM's reparameterised noise on log S per element (B, T, S): Weibull (1/k) log(−log(1 − u)); log-normal σ_q ε.
std::vector<float> bam_noise(Kind v, const VariantConfig& cfg, const CounterRng& rng, int64_t n) {
  std::vector<float> g(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    g[size_t(i)] = v == Kind::weibull ? float(std::log(-std::log1p(-rng.uniform(uint64_t(i)))) / cfg.k_weibull)
                                                 : float(cfg.sigma_q * rng.normal(uint64_t(i)));
  return g;
}

// The weights the head reads without a sample: the Dirichlet's mean under the prior, α_p / Σ α_p; the prior p for
// the others (the modules' posterior mean, the Gaussian context's mean weights).
Var<float> mean_weights(Kind v, const AttentionDists& d) {
  if (v == Kind::dirichlet) return softmax(log(dirichlet_alpha(d.scores, d.extra.cfg)), -1);
  return exp(d.log_prior);
}

float kl_weight(Kind v, const ObjectiveOptions& opt) {
  const float base = opt.att_kl >= 0 ? opt.att_kl : v == Kind::gauss ? 0.1f : 1.f;
  if (opt.kl_anneal <= 0) return base;
  const double m = double(opt.kl_anneal);
  return base * float((std::tanh((double(opt.step) - m) / (m / 4.5)) + 1) / 2);
}

ContinuousTerms objective_terms(Ctx& c, Kind v, const OutputHead& head, const AttentionDists& d,
                                const int32_t* y, const ObjectiveOptions& opt) {
  const Posterior P = build(c, v, head, d);
  const VariantConfig& cfg = d.extra.cfg;
  ContinuousTerms t;
  Var<float> lf;
  switch (v) {
    case Kind::dirichlet: {
      const bool warm = opt.step < opt.warm_start;
      lf = head.log_f_weighted(c, dirichlet_sample(warm ? P.alpha_p : P.alpha_q, c.next_rng()), y);
      if (warm) {  // the Jensen bound E_{Dir(α_p)} log f: no inference network yet
        t.per_token = t.value = lf;
        return t;
      }
      break;
    }
    case Kind::gauss:
      lf = head.log_f_context(c, gaussian_sample(P.mu, P.sigma, c.next_rng()), y);
      break;
    case Kind::weibull:
    case Kind::lognormal: {  // w = softmax(log p + noise)
      const std::vector<float> g = bam_noise(v, cfg, c.next_rng(), P.shape.numel());
      lf = head.log_f_weighted(c, softmax(add(d.log_prior, c.tape.input(P.shape, g.data())), -1), y);
      break;
    }
  }
  t.kl = analytic_kl(c, v, cfg, P);
  t.value = sub(lf, t.kl);
  const float w = v == Kind::dirichlet ? 1.f : kl_weight(v, opt);
  t.per_token = w == 1.f ? t.value : sub(lf, affine(t.kl, w, 0.f));
  return t;
}

AttentionEvalSums eval_sums(Ctx& c, Kind v, const OutputHead& head, const AttentionDists& d,
                            const int32_t* y, const float* token_mask) {
  const Posterior P = build(c, v, head, d);
  const VariantConfig& cfg = d.extra.cfg;
  const int64_t S = P.shape[-1], N = P.shape.numel() / S, n = P.shape.numel();
  const int K = std::max(1, cfg.eval_samples);
  Var<float> kl = analytic_kl(c, v, cfg, P);
  std::vector<double> log_w(size_t(K) * size_t(N)), lf_sum(static_cast<size_t>(N), 0.0);
  std::vector<float> buf;
  for (int k = 0; k < K; ++k) {
    const CounterRng rng = c.next_rng();
    std::vector<double> ratio(static_cast<size_t>(N), 0.0);  // log p(z_k) − log q(z_k) per query
    Var<float> lf;
    if (v == Kind::gauss) {
      const int64_t Hd = P.mu.dim(-1);
      buf.resize(size_t(N * Hd));
      const float *mu = P.mu.val(), *sigma = P.sigma.val(), *mu_p = P.mu_p.val();
      const bool zero_prior = P.mu_p.numel() == 1;
      for (int64_t i = 0; i < N * Hd; ++i) {
        const double e = rng.normal(uint64_t(i)), ctx = double(mu[i]) + double(sigma[i]) * e;
        const double m = zero_prior ? double(mu_p[0]) : double(mu_p[i]);
        buf[size_t(i)] = float(ctx);  // log N(ctx; m, 1) − log N(ctx; μ, σ)
        ratio[size_t(i / Hd)] += -0.5 * (ctx - m) * (ctx - m) + std::log(double(sigma[i])) + 0.5 * e * e;
      }
      const Shape ctx_shape = P.mu.shape();  // a copy: the next node may move the tape's node list
      lf = head.log_f_context(c, c.tape.input(ctx_shape, buf.data()), y);
    } else {
      buf.assign(size_t(n), 0.f);
      std::vector<double> log_s(static_cast<size_t>(S));
      for (int64_t q = 0; q < N; ++q) {
        double m = -INFINITY;
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = q * S + s;
          if (v == Kind::dirichlet) {  // all S coordinates (padding has α = e^{−10} on both sides)
            log_s[size_t(s)] = gamma_log_draw(double(P.alpha_q.val()[i]), rng, uint64_t(i));
          } else if (P.pad[size_t(i)]) {
            log_s[size_t(s)] = -INFINITY;
            continue;
          } else if (v == Kind::weibull) {
            const double k = cfg.k_weibull, beta = cfg.beta_gamma;
            const double log_lambda = double(P.phi.val()[i]) - std::lgamma(1 + 1 / k);
            const double E = -std::log1p(-rng.uniform(uint64_t(i))), ls = log_lambda + std::log(E) / k;
            const double alpha = P.log_pi.tape ? beta * std::exp(double(P.log_pi.val()[i])) : double(cfg.alpha_gamma);
            const double log_q = std::log(k) - log_lambda + (k - 1) * (ls - log_lambda) - E;
            const double log_p = alpha * std::log(beta) - std::lgamma(alpha) + (alpha - 1) * ls - beta * std::exp(ls);
            ratio[size_t(q)] += log_p - log_q;
            log_s[size_t(s)] = ls;
          } else {  // bam-lognormal: log S = μ_q + σ_q ε
            const double sq = cfg.sigma_q, sp = cfg.sigma_p, e = rng.normal(uint64_t(i));
            const double ls = double(P.phi.val()[i]) - 0.5 * sq * sq + sq * e;
            const double mp = P.log_pi.tape ? double(P.log_pi.val()[i]) : 0.0;
            ratio[size_t(q)] += -std::log(sp) - 0.5 * ((ls - mp) / sp) * ((ls - mp) / sp) + std::log(sq) + 0.5 * e * e;
            log_s[size_t(s)] = ls;
          }
          m = std::max(m, log_s[size_t(s)]);
        }
        if (v == Kind::dirichlet) m = *std::max_element(log_s.begin(), log_s.end());
        double z = 0;
        for (int64_t s = 0; s < S; ++s) z += std::exp(log_s[size_t(s)] - m);
        double a_q0 = 0, a_p0 = 0;
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = q * S + s;
          const double log_w_s = log_s[size_t(s)] - m - std::log(z);  // log of the attention weight
          buf[size_t(i)] = float(std::exp(log_w_s));
          if (v != Kind::dirichlet) continue;
          const double aq = P.alpha_q.val()[i], ap = P.alpha_p.val()[i];  // log Dir(z; α_p) − log Dir(z; α_q)
          ratio[size_t(q)] += (ap - aq) * log_w_s - std::lgamma(ap) + std::lgamma(aq);
          a_q0 += aq, a_p0 += ap;
        }
        if (v == Kind::dirichlet) ratio[size_t(q)] += std::lgamma(a_p0) - std::lgamma(a_q0);
      }
      lf = head.log_f_weighted(c, c.tape.input(P.shape, buf.data()), y);
    }
    for (int64_t q = 0; q < N; ++q) {
      log_w[size_t(k) * size_t(N) + size_t(q)] = double(lf.val()[q]) + ratio[size_t(q)];
      lf_sum[size_t(q)] += double(lf.val()[q]);
    }
  }
  Var<float> mean_attn = head.log_f_weighted(c, mean_weights(v, d), y);
  AttentionEvalSums r;
  r.sampled = true;
  for (int64_t q = 0; q < N; ++q) {
    if (token_mask[q] == 0.f) continue;
    double m = -INFINITY, acc = 0, h = 0;
    for (int k = 0; k < K; ++k) m = std::max(m, log_w[size_t(k) * size_t(N) + size_t(q)]);
    for (int k = 0; k < K; ++k) acc += std::exp(log_w[size_t(k) * size_t(N) + size_t(q)] - m);
    for (int64_t s = 0; s < S; ++s) {
      const double lp = d.log_prior.val()[q * S + s], p = std::exp(lp);
      if (p > 0) h -= p * lp;
    }
    r.tokens += 1;
    r.log_lik += m + std::log(acc / K);
    r.kl += double(kl.val()[q]);
    r.elbo += lf_sum[size_t(q)] / K - double(kl.val()[q]);
    r.entropy += h;
    r.mean_attn_log_lik += double(mean_attn.val()[q]);
  }
  return r;
}

class ContinuousLatent : public AttentionVariant {
 public:
  ContinuousLatent(const AttnVariantInfo& info, Kind kind) : AttentionVariant(info), kind_(kind) {}
  Kind kind() const { return kind_; }

  Var<float> weights(const AttentionDists& d) const override { return mean_weights(kind_, d); }

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions& opt) const override {
    const ContinuousTerms ct = objective_terms(c, kind_, head, d, t.y, opt);
    return masked_terms(ct.per_token, ct.value, ct.kl, t);
  }

  AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                             const float* token_mask, int) const override {
    return eval_sums(c, kind_, head, d, y, token_mask);
  }

  void declare_params(ParamStore<float>& ps, const VariantConfig& cfg, int Hd, VariantParamIds& ids) const override {
    if (kind_ == Kind::gauss) {
      ids.sigma_W1 = ps.add("attn/sigma/W1", Shape{Hd, Hd});
      ids.sigma_b1 = ps.add("attn/sigma/b1", Shape{Hd});
      ids.sigma_W2 = ps.add("attn/sigma/W2", Shape{Hd, Hd});
      ids.sigma_b2 = ps.add("attn/sigma/b2", Shape{Hd});
    }
    if ((kind_ == Kind::weibull || kind_ == Kind::lognormal) && cfg.bam_prior == "contextual") {
      ids.prior_W1 = ps.add("attn/prior/W1", Shape{Hd, kPriorHidden});
      ids.prior_b1 = ps.add("attn/prior/b1", Shape{kPriorHidden});
      ids.prior_w2 = ps.add("attn/prior/w2", Shape{kPriorHidden, 1});
      ids.prior_b2 = ps.add("attn/prior/b2", Shape{1});
    }
  }

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    const auto str = [](float x) { return fmt::format("{}", x); };
    switch (kind_) {
      case Kind::dirichlet:
        meta["alpha-transform"] = cfg.alpha_transform;
        break;
      case Kind::gauss:
        meta["gauss-prior"] = cfg.gauss_prior;
        break;
      case Kind::weibull:
        meta["bam-prior"] = cfg.bam_prior, meta["k-weibull"] = str(cfg.k_weibull);
        meta["alpha-gamma"] = str(cfg.alpha_gamma), meta["beta-gamma"] = str(cfg.beta_gamma);
        break;
      case Kind::lognormal:
        meta["bam-prior"] = cfg.bam_prior, meta["sigma-q"] = str(cfg.sigma_q), meta["sigma-p"] = str(cfg.sigma_p);
        break;
    }
    meta["eval-samples"] = fmt::format("{}", cfg.eval_samples);
  }

 private:
  Kind kind_;
};

Kind kind_of(AttnVariant v) {
  const auto* family = dynamic_cast<const ContinuousLatent*>(&*v);
  LAVA_CHECK(family != nullptr, "{} is not a sampled attention variant", variant_info(v).name);
  return family->kind();
}

}  // namespace

float continuous_kl_weight(AttnVariant v, const ObjectiveOptions& opt) { return kl_weight(kind_of(v), opt); }

ContinuousTerms continuous_objective(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                     const int32_t* y, const ObjectiveOptions& opt) {
  return objective_terms(c, kind_of(v), head, d, y, opt);
}

AttentionEvalSums continuous_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                  const int32_t* y, const float* token_mask) {
  return eval_sums(c, kind_of(v), head, d, y, token_mask);
}

const AttentionVariant& var_dirichlet_attention() {
  static const ContinuousLatent v(
      {.name = "var-dirichlet",
       .summary = "relaxed z ~ Dir(alpha_q), reparameterised (implicit gamma gradients); ELBO with KL(Dir||Dir)",
       .uses_q = true,
       .sampled = true},
      Kind::dirichlet);
  return v;
}

const AttentionVariant& gauss_ctx_attention() {
  static const ContinuousLatent v(
      {.name = "gauss-ctx",
       .summary = "context ~ N(soft context, sigma^2), reparameterised; KL to N(mean, I)",
       .sampled = true},
      Kind::gauss);
  return v;
}

const AttentionVariant& bam_weibull_attention() {
  static const ContinuousLatent v(
      {.name = "bam-weibull",
       .summary = "weights S ~ Weibull(k, p/G(1+1/k)), attention S/sum S; KL to a Gamma prior",
       .sampled = true},
      Kind::weibull);
  return v;
}

const AttentionVariant& bam_lognormal_attention() {
  static const ContinuousLatent v(
      {.name = "bam-lognormal",
       .summary = "log S ~ N(log p - s^2/2, s^2), attention S/sum S; KL to a log-normal",
       .sampled = true},
      Kind::lognormal);
  return v;
}

}  // namespace lava
