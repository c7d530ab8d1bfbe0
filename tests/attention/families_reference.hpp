#pragma once
// Independent computations in double for the sampled members of the wider family (var-dirichlet, gauss-ctx, bam-*) on
// the tiny problem of tests/attention/families_tiny.hpp: the cases compared, a probe head that reveals the context,
// the prior and posterior of each query with samplers from <random> and the closed-form KL, and the reference figures
// (naive likelihood by prior sampling, KL, ELBO, Jensen bound) they give.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attention/variants/continuous.hpp"
#include "families_tiny.hpp"

namespace families_test {

using namespace lava;

inline double digamma(double x) {  // recurrence up to 6, then the asymptotic series
  double r = 0;
  for (; x < 6; x += 1) r -= 1 / x;
  const double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

inline double log_mean_exp(const Vec& a) {
  double m = -INFINITY, s = 0;
  for (double x : a) m = std::max(m, x);
  for (double x : a) s += std::exp(x - m);
  return m + std::log(s / double(a.size()));
}

struct SampledCase {
  std::string name;
  AttnVariant v;
  VariantConfig cfg;
  bool compare_naive = true;
};

// Settings where the posterior is not far from the prior, so that p(z)/q(z) has a finite (and small) variance:
// BAM's Weibull shape k < 1 has heavier tails than the Gamma prior (and α > k/2 near 0), σ_q > σ_p/√2 for the
// log-normal, and gauss-ctx's σ is kept near 1 (tiny_for below).
inline std::vector<SampledCase> sampled_cases() {
  std::vector<SampledCase> cs;
  VariantConfig c;
  cs.push_back({"var-dirichlet exp", parse_attn_variant("var-dirichlet", "nmt"), c});
  c.alpha_transform = "softplus";
  cs.push_back({"var-dirichlet softplus", parse_attn_variant("var-dirichlet", "nmt"), c});
  c = VariantConfig{};
  cs.push_back({"gauss-ctx mean", parse_attn_variant("gauss-ctx", "nmt"), c});
  c.gauss_prior = "zero";
  cs.push_back({"gauss-ctx zero", parse_attn_variant("gauss-ctx", "nmt"), c});
  c = VariantConfig{};
  c.k_weibull = 0.8f, c.beta_gamma = 4.f;
  cs.push_back({"bam-weibull contextual", parse_attn_variant("bam-weibull", "nmt"), c});
  c.bam_prior = "fixed", c.k_weibull = 0.9f, c.alpha_gamma = 1.f, c.beta_gamma = 4.f;
  cs.push_back({"bam-weibull fixed", parse_attn_variant("bam-weibull", "nmt"), c});
  c = VariantConfig{};
  c.sigma_q = 0.8f, c.sigma_p = 1.f;
  cs.push_back({"bam-lognormal contextual", parse_attn_variant("bam-lognormal", "nmt"), c});
  // A fixed prior log S ~ N(0, σ_p²) sits far from q's log p − σ_q²/2 whatever σ: p/q has a huge second moment,
  // so no affordable K gives a reliable importance-weighted figure to compare (KL and ELBO are still checked).
  c.bam_prior = "fixed";
  cs.push_back({"bam-lognormal fixed", parse_attn_variant("bam-lognormal", "nmt"), c, false});
  return cs;
}

// A probe head that reveals the first coordinate x of the context from log f: relu(A + x) with A large enough to
// stay positive, one row of W_gen (1 for every label but 2), b_gen[2] = 10, so
//   log f_y = o − log(4 e^o + e^10)  =>  o = log f + 10 − log(1 − 4 e^{log f}).
// Memory's first coordinates are 0.5, 1, 1.5, 2, so x = Σ_s w_s U_s0 is a linear functional of the weights.
inline void make_probe(Tiny& t, float A) {
  t.relu = true;
  for (int i = 0; i < Tiny::N * Tiny::Hd; ++i) t.ps.val(t.query)[i] = i % Tiny::Hd ? 0.f : A;
  for (int i = 0; i < Tiny::B * Tiny::S; ++i) t.ps.val(t.memory)[i * Tiny::Hd] = 0.5f * float(1 + i % Tiny::S);
  for (int i = 0; i < Tiny::Hd * Tiny::V; ++i) t.ps.val(t.W_gen)[i] = i < Tiny::V && i != 2 ? 1.f : 0.f;
  for (int v = 0; v < Tiny::V; ++v) t.ps.val(t.b_gen)[v] = v == 2 ? 10.f : 0.f;
}

inline std::unique_ptr<Tiny> tiny_for(const SampledCase& sc, int eval_samples, uint64_t seed) {
  VariantConfig cfg = sc.cfg;
  cfg.eval_samples = eval_samples;
  auto t = std::make_unique<Tiny>(sc.v, cfg, seed);
  if (sc.v == parse_attn_variant("bam-weibull", "nmt") ||
      sc.v == parse_attn_variant("bam-lognormal", "nmt")) {  // p and π nearer uniform
    for (int k = 0; k < Tiny::N * Tiny::S; ++k)
      if (t->ps.val(t->scores)[k] != kMaskedLogit) t->ps.val(t->scores)[k] *= 0.5f;
    if (sc.cfg.bam_prior == "contextual")
      for (int j = 0; j < 10; ++j) t->ps.val(t->ps.find("attn/prior/w2"))[j] *= 0.3f;
  }
  if (sc.v == parse_attn_variant("gauss-ctx", "nmt")) {  // log σ = 0.2 + small: σ in [0.95, 1.6]
    for (const char* name : {"attn/sigma/W2", "attn/sigma/b2"}) {
      const int id = t->ps.find(name);
      for (int64_t i = 0; i < t->ps.params()[size_t(id)].shape.numel(); ++i)
        t->ps.val(id)[i] = name[11] == 'b' ? 0.2f : 0.1f * t->ps.val(id)[i];
    }
  }
  make_probe(*t, sc.v == parse_attn_variant("gauss-ctx", "nmt") ? 6.f : 1.f);
  return t;
}

// The variant's prior and posterior for real query n of t, in double: samplers from <random> (the context each
// latent gives) and the closed-form KL(q ‖ p).
struct Latent {
  const Tiny& t;
  AttnVariant v;
  int n, L;
  Vec p, pi, ap, aq, mu, m, sigma;
  double k, beta, sq, sp;

  Latent(const Tiny& tiny, AttnVariant variant, int query) : t(tiny), v(variant), n(query), L(Tiny::len[n / Tiny::T]) {
    const VariantConfig& cfg = t.cfg;
    k = cfg.k_weibull, beta = cfg.beta_gamma, sq = cfg.sigma_q, sp = cfg.sigma_p;
    p = t.softmax_row(t.scores, n), mu = t.context(n, p), m = Vec(Tiny::Hd, 0.0), sigma = Vec(Tiny::Hd);
    if ((v == parse_attn_variant("bam-weibull", "nmt") || v == parse_attn_variant("bam-lognormal", "nmt")) &&
        cfg.bam_prior == "contextual")
      pi = t.contextual_pi(n);
    ap = t.dirichlet_alpha_row(t.scores, n), aq = t.dirichlet_alpha_row(t.q_scores, n);
    if (v != parse_attn_variant("gauss-ctx", "nmt")) return;
    Vec uniform(Tiny::S, 0.0);
    for (int s = 0; s < L; ++s) uniform[size_t(s)] = 1.0 / L;
    if (cfg.gauss_prior == "mean") m = t.context(n, uniform);
    for (int j = 0; j < Tiny::Hd; ++j) {  // log σ = W2ᵀ tanh(W1ᵀ μ + b1) + b2
      double ls = t.P("attn/sigma/b2")[j];
      for (int h = 0; h < Tiny::Hd; ++h) {
        double a = t.P("attn/sigma/b1")[h];
        for (int i = 0; i < Tiny::Hd; ++i) a += mu[size_t(i)] * t.P("attn/sigma/W1")[i * Tiny::Hd + h];
        ls += std::tanh(a) * t.P("attn/sigma/W2")[h * Tiny::Hd + j];
      }
      sigma[size_t(j)] = std::exp(ls);
    }
  }
  double alpha_gamma(int s) const { return pi.empty() ? double(t.cfg.alpha_gamma) : beta * pi[size_t(s)]; }
  double mu_q(int s) const { return std::log(p[size_t(s)]) - sq * sq / 2; }
  double mu_p(int s) const { return pi.empty() ? 0.0 : std::log(pi[size_t(s)]); }

  Vec draw(bool prior, std::mt19937_64& gen) const {
    std::normal_distribution<double> normal;
    if (v == parse_attn_variant("gauss-ctx", "nmt")) {
      Vec c(Tiny::Hd);
      for (int j = 0; j < Tiny::Hd; ++j)
        c[size_t(j)] = prior ? m[size_t(j)] + normal(gen) : mu[size_t(j)] + sigma[size_t(j)] * normal(gen);
      return c;
    }
    Vec logS(Tiny::S, -INFINITY);
    for (int s = 0; s < Tiny::S; ++s) {
      if (v == parse_attn_variant("var-dirichlet", "nmt"))
        logS[size_t(s)] = std::log(std::gamma_distribution<double>((prior ? ap : aq)[size_t(s)], 1.0)(gen));
      else if (s < L && v == parse_attn_variant("bam-weibull", "nmt"))
        logS[size_t(s)] = std::log(prior ? std::gamma_distribution<double>(alpha_gamma(s), 1 / beta)(gen)
                                         : std::weibull_distribution<double>(k, p[size_t(s)] / std::tgamma(1 + 1 / k))(gen));
      else if (s < L)
        logS[size_t(s)] = prior ? mu_p(s) + sp * normal(gen) : mu_q(s) + sq * normal(gen);
    }
    double mx = -INFINITY, z = 0;
    for (double x : logS) mx = std::max(mx, x);
    Vec w(Tiny::S);
    for (int s = 0; s < Tiny::S; ++s) z += w[size_t(s)] = std::exp(logS[size_t(s)] - mx);
    for (double& x : w) x /= z;
    return t.context(n, w);
  }

  double kl() const {
    constexpr double kEuler = 0.57721566490153286;
    double kl = 0;
    if (v == parse_attn_variant("var-dirichlet", "nmt")) {
      double a0 = 0, b0 = 0;
      for (int s = 0; s < Tiny::S; ++s) a0 += aq[size_t(s)], b0 += ap[size_t(s)];
      kl = std::lgamma(a0) - std::lgamma(b0);
      for (int s = 0; s < Tiny::S; ++s) {
        const double a = aq[size_t(s)], b = ap[size_t(s)];
        kl += std::lgamma(b) - std::lgamma(a) + (a - b) * (digamma(a) - digamma(a0));
      }
    } else if (v == parse_attn_variant("gauss-ctx", "nmt")) {
      for (int j = 0; j < Tiny::Hd; ++j) {
        const double d = mu[size_t(j)] - m[size_t(j)], s2 = sigma[size_t(j)] * sigma[size_t(j)];
        kl += -std::log(sigma[size_t(j)]) + (s2 + d * d) / 2 - 0.5;
      }
    } else {
      for (int s = 0; s < L; ++s) {
        if (v == parse_attn_variant("bam-weibull", "nmt")) {  // E_q log q − E_q log p, E log S = log λ − γ/k, E S = p_s
          const double lam = p[size_t(s)] / std::tgamma(1 + 1 / k), a = alpha_gamma(s);
          const double e_log_q = std::log(k) - std::log(lam) - (k - 1) * kEuler / k - 1;
          const double e_log_p =
              a * std::log(beta) - std::lgamma(a) + (a - 1) * (std::log(lam) - kEuler / k) - beta * p[size_t(s)];
          kl += e_log_q - e_log_p;
        } else {
          const double d = mu_q(s) - mu_p(s);
          kl += std::log(sp / sq) + (sq * sq + d * d) / (2 * sp * sp) - 0.5;
        }
      }
    }
    return kl;
  }
};

// Sums over the real tokens: the naive estimate log (1/K) Σ_k f(x, z_k), z_k from the prior, and its delta-method
// variance; the closed-form KL(q ‖ p); the ELBO with E_q log f from our sampler of q, and its variance; the
// Jensen bound E_p log f.
struct Reference {
  double naive = 0, naive_var = 0, kl = 0, elbo = 0, elbo_var = 0, jensen_prior = 0;
  Vec x_mean, x_var, x_m4;  // per query: moments of the context's first coordinate under q (the probe's x)
};

inline Reference reference(const Tiny& t, AttnVariant v, int K, uint64_t seed) {
  std::mt19937_64 gen(seed);
  Reference r;
  for (int n = 0; n < Tiny::N; ++n) {
    if (Tiny::mask[n] == 0) continue;
    const Latent z(t, v, n);
    Vec lf_p(static_cast<size_t>(K)), lf_q(lf_p), x(lf_p);
    for (size_t i = 0; i < lf_p.size(); ++i) {
      const Vec from_q = z.draw(false, gen);
      lf_p[i] = t.log_f(n, z.draw(true, gen)), lf_q[i] = t.log_f(n, from_q), x[i] = from_q[0];
    }
    const double lme = log_mean_exp(lf_p);
    double f2 = 0, mean_q = 0, var_q = 0;
    for (double x : lf_p) f2 += std::exp(2 * (x - lme));
    for (double x : lf_q) mean_q += x / K;
    for (double x : lf_q) var_q += (x - mean_q) * (x - mean_q) / (K - 1);
    r.naive += lme, r.naive_var += (f2 / K - 1) / K;  // Var(f)/(K E[f]²), E[f] = exp(lme)
    for (double x : lf_p) r.jensen_prior += x / K;
    r.kl += z.kl(), r.elbo += mean_q - z.kl(), r.elbo_var += var_q / K;
    double mean = 0, var = 0, m4 = 0;
    for (double xi : x) mean += xi / K;
    for (double xi : x) var += std::pow(xi - mean, 2) / K, m4 += std::pow(xi - mean, 4) / K;
    r.x_mean.push_back(mean), r.x_var.push_back(var), r.x_m4.push_back(m4);
  }
  return r;
}

}  // namespace families_test
