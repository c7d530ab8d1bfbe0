// The wider family of attention variants (attention/variant.hpp) against independent computations in double: the
// sampled variants' importance-weighted likelihood against naive sampling from the prior, their KL against the
// closed forms, their ELBO and their training draws against our own samplers of q; the categorical warm start's
// gradients; the KL weight of gauss-ctx and bam-*. (Deterministic weights and the CLI: test_families_cli.cpp.)
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attention/continuous.hpp"

using namespace lava;

namespace {

using Vec = std::vector<double>;

double digamma(double x) {  // recurrence up to 6, then the asymptotic series
  double r = 0;
  for (; x < 6; x += 1) r -= 1 / x;
  const double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

double log_mean_exp(const Vec& a) {
  double m = -INFINITY, s = 0;
  for (double x : a) m = std::max(m, x);
  for (double x : a) s += std::exp(x - m);
  return m + std::log(s / double(a.size()));
}

// Two batch rows of T = 2 queries over S = 4 positions (row 1 has 2 real ones), head width 3, 5 labels; the
// fourth query is padding (token mask 0). Everything is a parameter, so gradients reach every input.
struct Tiny {
  static constexpr int B = 2, T = 2, S = 4, Hd = 3, V = 5, N = B * T;
  static constexpr int len[B] = {4, 2};
  static constexpr float mask[N] = {1, 1, 1, 0};
  static constexpr int32_t y[N] = {1, 3, 0, 4};
  VariantConfig cfg;
  bool relu;  // the head's activation: tanh, or relu (make_probe)
  ParamStore<float> ps;
  int query, memory, W_gen, b_gen, scores, q_scores;
  VariantParams vp;

  Tiny(AttnVariant v, const VariantConfig& c, uint64_t seed) : cfg(c), relu(false) {
    query = ps.add("query", Shape{B, T, Hd});
    memory = ps.add("memory", Shape{B, S, Hd});
    W_gen = ps.add("W_gen", Shape{Hd, V});
    b_gen = ps.add("b_gen", Shape{V});
    scores = ps.add("scores", Shape{B, T, S});
    q_scores = ps.add("q_scores", Shape{B, T, S});
    vp = VariantParams(ps, v, cfg, Hd);
    ps.init_uniform(0.8f, seed);
    float *s = ps.val(scores), *qs = ps.val(q_scores);
    for (int k = 0; k < N * S; ++k) {
      qs[k] = s[k] + 0.3f * qs[k];  // q near the prior
      if (k % S >= len[k / S / T]) s[k] = qs[k] = kMaskedLogit;
    }
  }
  const float* P(int id) const { return ps.values() + ps.params()[size_t(id)].offset; }
  const float* P(const char* name) const { return P(ps.find(name)); }

  struct Built {
    OutputHead head;
    AttentionDists d;
  };
  Built build(Ctx& c) {
    Built r;
    r.head = OutputHead{c.p(query), c.p(memory), c.p(W_gen), c.p(b_gen), relu};
    r.d.scores = c.p(scores), r.d.log_prior = log_softmax(r.d.scores, -1);
    r.d.q_scores = c.p(q_scores), r.d.log_q = log_softmax(r.d.q_scores, -1);
    r.d.extra = vp.vars(c);
    return r;
  }

  // log f(x, context)_y of query n, and the context of weights w over the memory of n's batch row.
  double log_f(int n, const Vec& ctx) const {
    const float *A = P(query) + n * Hd, *W = P(W_gen);
    double logit[V], m = -INFINITY, z = 0;
    for (int v = 0; v < V; ++v) logit[v] = P(b_gen)[v];
    for (int h = 0; h < Hd; ++h) {
      const double a = double(A[h]) + ctx[size_t(h)], o = relu ? std::max(a, 0.0) : std::tanh(a);
      for (int v = 0; v < V; ++v) logit[v] += o * W[h * V + v];
    }
    for (double l : logit) m = std::max(m, l);
    for (double l : logit) z += std::exp(l - m);
    return logit[y[n]] - m - std::log(z);
  }
  Vec context(int n, const Vec& w) const {
    const float* U = P(memory) + n / T * S * Hd;
    Vec ctx(Hd, 0.0);
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < Hd; ++h) ctx[size_t(h)] += w[size_t(s)] * U[s * Hd + h];
    return ctx;
  }
  double log_f_at(int n, int s) const {
    Vec e(S, 0.0);
    e[size_t(s)] = 1;
    return log_f(n, context(n, e));
  }
  // softmax over the real positions of row n of scores (p) or q_scores (q); 0 at padding.
  Vec softmax_row(int id, int n) const {
    const int L = len[n / T];
    Vec p(S, 0.0);
    double z = 0;
    for (int s = 0; s < L; ++s) z += p[size_t(s)] = std::exp(double(P(id)[n * S + s]));
    for (int s = 0; s < L; ++s) p[size_t(s)] /= z;
    return p;
  }
  // BAM's contextual prior π = softmax_i (w2ᵀ relu(W1ᵀ U_i + b1) + b2) over the real positions of n's row.
  Vec contextual_pi(int n) const {
    const int b = n / T, L = len[b];
    Vec pi(S, 0.0);
    double z = 0;
    for (int s = 0; s < L; ++s) {
      double g = P("attn/prior/b2")[0];
      for (int j = 0; j < 10; ++j) {
        double a = P("attn/prior/b1")[j];
        for (int h = 0; h < Hd; ++h) a += double(P(memory)[(b * S + s) * Hd + h]) * P("attn/prior/W1")[h * 10 + j];
        g += std::max(a, 0.0) * P("attn/prior/w2")[j];
      }
      z += pi[size_t(s)] = std::exp(g);
    }
    for (int s = 0; s < L; ++s) pi[size_t(s)] /= z;
    return pi;
  }
  Vec dirichlet_alpha_row(int id, int n) const {
    Vec a(S);
    for (int s = 0; s < S; ++s) {
      const double x = P(id)[n * S + s];
      a[size_t(s)] = cfg.alpha_transform == "softplus" ? std::log1p(std::exp(x)) + std::exp(-10.0)
                                                       : std::exp(10 * std::tanh(x / 10));
    }
    return a;
  }
};

struct SampledCase {
  std::string name;
  AttnVariant v;
  VariantConfig cfg;
  bool compare_naive = true;
};

// Settings where the posterior is not far from the prior, so that p(z)/q(z) has a finite (and small) variance:
// BAM's Weibull shape k < 1 has heavier tails than the Gamma prior (and α > k/2 near 0), σ_q > σ_p/√2 for the
// log-normal, and gauss-ctx's σ is kept near 1 (tiny_for below).
std::vector<SampledCase> sampled_cases() {
  std::vector<SampledCase> cs;
  VariantConfig c;
  cs.push_back({"var-dirichlet exp", AttnVariant::var_dirichlet, c});
  c.alpha_transform = "softplus";
  cs.push_back({"var-dirichlet softplus", AttnVariant::var_dirichlet, c});
  c = VariantConfig{};
  cs.push_back({"gauss-ctx mean", AttnVariant::gauss_ctx, c});
  c.gauss_prior = "zero";
  cs.push_back({"gauss-ctx zero", AttnVariant::gauss_ctx, c});
  c = VariantConfig{};
  c.k_weibull = 0.8f, c.beta_gamma = 4.f;
  cs.push_back({"bam-weibull contextual", AttnVariant::bam_weibull, c});
  c.bam_prior = "fixed", c.k_weibull = 0.9f, c.alpha_gamma = 1.f, c.beta_gamma = 4.f;
  cs.push_back({"bam-weibull fixed", AttnVariant::bam_weibull, c});
  c = VariantConfig{};
  c.sigma_q = 0.8f, c.sigma_p = 1.f;
  cs.push_back({"bam-lognormal contextual", AttnVariant::bam_lognormal, c});
  // A fixed prior log S ~ N(0, σ_p²) sits far from q's log p − σ_q²/2 whatever σ: p/q has a huge second moment,
  // so no affordable K gives a reliable importance-weighted figure to compare (KL and ELBO are still checked).
  c.bam_prior = "fixed";
  cs.push_back({"bam-lognormal fixed", AttnVariant::bam_lognormal, c, false});
  return cs;
}

// A probe head that reveals the first coordinate x of the context from log f: relu(A + x) with A large enough to
// stay positive, one row of W_gen (1 for every label but 2), b_gen[2] = 10, so
//   log f_y = o − log(4 e^o + e^10)  =>  o = log f + 10 − log(1 − 4 e^{log f}).
// Memory's first coordinates are 0.5, 1, 1.5, 2, so x = Σ_s w_s U_s0 is a linear functional of the weights.
void make_probe(Tiny& t, float A) {
  t.relu = true;
  for (int i = 0; i < Tiny::N * Tiny::Hd; ++i) t.ps.val(t.query)[i] = i % Tiny::Hd ? 0.f : A;
  for (int i = 0; i < Tiny::B * Tiny::S; ++i) t.ps.val(t.memory)[i * Tiny::Hd] = 0.5f * float(1 + i % Tiny::S);
  for (int i = 0; i < Tiny::Hd * Tiny::V; ++i) t.ps.val(t.W_gen)[i] = i < Tiny::V && i != 2 ? 1.f : 0.f;
  for (int v = 0; v < Tiny::V; ++v) t.ps.val(t.b_gen)[v] = v == 2 ? 10.f : 0.f;
}

std::unique_ptr<Tiny> tiny_for(const SampledCase& sc, int eval_samples, uint64_t seed) {
  VariantConfig cfg = sc.cfg;
  cfg.eval_samples = eval_samples;
  auto t = std::make_unique<Tiny>(sc.v, cfg, seed);
  if (sc.v == AttnVariant::bam_weibull || sc.v == AttnVariant::bam_lognormal) {  // p and π nearer uniform
    for (int k = 0; k < Tiny::N * Tiny::S; ++k)
      if (t->ps.val(t->scores)[k] != kMaskedLogit) t->ps.val(t->scores)[k] *= 0.5f;
    if (sc.cfg.bam_prior == "contextual")
      for (int j = 0; j < 10; ++j) t->ps.val(t->ps.find("attn/prior/w2"))[j] *= 0.3f;
  }
  if (sc.v == AttnVariant::gauss_ctx) {  // log σ = 0.2 + small: σ in [0.95, 1.6]
    for (const char* name : {"attn/sigma/W2", "attn/sigma/b2"}) {
      const int id = t->ps.find(name);
      for (int64_t i = 0; i < t->ps.params()[size_t(id)].shape.numel(); ++i)
        t->ps.val(id)[i] = name[11] == 'b' ? 0.2f : 0.1f * t->ps.val(id)[i];
    }
  }
  make_probe(*t, sc.v == AttnVariant::gauss_ctx ? 6.f : 1.f);
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
    if ((v == AttnVariant::bam_weibull || v == AttnVariant::bam_lognormal) && cfg.bam_prior == "contextual")
      pi = t.contextual_pi(n);
    ap = t.dirichlet_alpha_row(t.scores, n), aq = t.dirichlet_alpha_row(t.q_scores, n);
    if (v != AttnVariant::gauss_ctx) return;
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
    if (v == AttnVariant::gauss_ctx) {
      Vec c(Tiny::Hd);
      for (int j = 0; j < Tiny::Hd; ++j)
        c[size_t(j)] = prior ? m[size_t(j)] + normal(gen) : mu[size_t(j)] + sigma[size_t(j)] * normal(gen);
      return c;
    }
    Vec logS(Tiny::S, -INFINITY);
    for (int s = 0; s < Tiny::S; ++s) {
      if (v == AttnVariant::var_dirichlet)
        logS[size_t(s)] = std::log(std::gamma_distribution<double>((prior ? ap : aq)[size_t(s)], 1.0)(gen));
      else if (s < L && v == AttnVariant::bam_weibull)
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
    if (v == AttnVariant::var_dirichlet) {
      double a0 = 0, b0 = 0;
      for (int s = 0; s < Tiny::S; ++s) a0 += aq[size_t(s)], b0 += ap[size_t(s)];
      kl = std::lgamma(a0) - std::lgamma(b0);
      for (int s = 0; s < Tiny::S; ++s) {
        const double a = aq[size_t(s)], b = ap[size_t(s)];
        kl += std::lgamma(b) - std::lgamma(a) + (a - b) * (digamma(a) - digamma(a0));
      }
    } else if (v == AttnVariant::gauss_ctx) {
      for (int j = 0; j < Tiny::Hd; ++j) {
        const double d = mu[size_t(j)] - m[size_t(j)], s2 = sigma[size_t(j)] * sigma[size_t(j)];
        kl += -std::log(sigma[size_t(j)]) + (s2 + d * d) / 2 - 0.5;
      }
    } else {
      for (int s = 0; s < L; ++s) {
        if (v == AttnVariant::bam_weibull) {  // E_q log q − E_q log p, E log S = log λ − γ/k, E S = p_s
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

Reference reference(const Tiny& t, AttnVariant v, int K, uint64_t seed) {
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

}  // namespace

TEST_CASE("families: importance-weighted likelihood agrees with naive prior sampling; KL, ELBO, threads") {
  // The estimate log (1/K) Σ_k f(z_k) p(z_k)/q(z_k), z_k ~ q, and the naive log (1/K) Σ_k f(z_k), z_k ~ p, are both
  // consistent for log p(y|x), with bias −Var/(2K E²) (< 1e-3 here). R = 8 independent runs of K = 250 give the
  // code's standard error from their spread; ours (Kref draws) comes from the delta method. Tolerance: 4 combined
  // standard errors plus 2e-3 for the float head. The probe head (make_probe) makes log f move one for one with
  // the context, so a wrong posterior or ratio shows at once.
  constexpr int R = 8, K = 250, D = 800, Kref = 8000;
  const int saved = omp_get_max_threads();
  for (const SampledCase& sc : sampled_cases()) {
    CAPTURE(sc.name);
    std::unique_ptr<Tiny> tp = tiny_for(sc, K, 21);
    Tiny& t = *tp;
    const Reference ref = reference(t, sc.v, Kref, 5);
    Tape<float> tape;
    auto eval = [&](uint64_t seed) {
      tape.reset();
      Ctx c{tape, t.ps, false, CounterRng(seed, 11), 0.f};
      NoGrad<float> no_grad(tape);
      Tiny::Built b = t.build(c);
      return attention_eval_batch(c, sc.v, b.head, b.d, Tiny::y, Tiny::mask, 0);
    };
    omp_set_num_threads(2);
    double iw = 0, iw2 = 0, elbo = 0;
    for (int r = 0; r < R; ++r) {
      const AttentionEvalSums e = eval(100 + uint64_t(r));
      CHECK(e.tokens == 3);
      CHECK(e.kl == doctest::Approx(ref.kl).epsilon(1e-4));  // the closed form, in double
      CHECK(e.kl > 0);
      iw += e.log_lik / R, iw2 += e.log_lik * e.log_lik / R, elbo += e.elbo / R;
    }
    const double iw_se2 = std::max(0.0, iw2 - iw * iw) * R / (R - 1) / R;
    if (sc.compare_naive) CHECK(std::abs(iw - ref.naive) < 4 * std::sqrt(iw_se2 + ref.naive_var) + 2e-3);
    CHECK(elbo <= iw + 3 * std::sqrt(iw_se2));  // E log p̂ ≥ ELBO
    // The code's ELBO ((1/K) Σ log f − KL over R·K draws from its q) against ours from our own sampler of q.
    CHECK(std::abs(elbo - ref.elbo) < 4 * std::sqrt(ref.elbo_var * (1 + double(Kref) / (R * K))) + 2e-3);
    // Identical figures with one thread.
    const AttentionEvalSums two = eval(100);
    omp_set_num_threads(1);
    const AttentionEvalSums one = eval(100);
    CHECK(one.log_lik == two.log_lik);
    CHECK(one.elbo == two.elbo);
    CHECK(one.kl == two.kl);
    // Training draws one latent per query from q (reparameterised): through the probe, the first coordinate x of
    // its context has the mean and variance of our sampler's (tolerance: 4 standard errors).
    omp_set_num_threads(2);
    Vec sum(Tiny::N, 0.0), sum2(Tiny::N, 0.0);
    for (int k = 0; k < D; ++k) {
      tape.reset();
      Ctx c{tape, t.ps, true, CounterRng(900 + uint64_t(k), 5), 0.f};
      NoGrad<float> no_grad(tape);
      Tiny::Built b = t.build(c);
      const ContinuousTerms ct = continuous_objective(c, sc.v, b.head, b.d, Tiny::y, ObjectiveOptions{});
      if (k == 0) CHECK(ct.kl.val()[0] + ct.kl.val()[1] + ct.kl.val()[2] == doctest::Approx(ref.kl).epsilon(1e-4));
      for (int n = 0; n < 3; ++n) {
        const double lf = double(ct.value.val()[n]) + ct.kl.val()[n];
        const double x = lf + 10 - std::log1p(-4 * std::exp(lf)) - t.P(t.query)[n * Tiny::Hd];
        sum[size_t(n)] += x / D, sum2[size_t(n)] += x * x / D;
      }
    }
    double dvar = 0, dvar_se2 = 0;  // the variances pooled over the tokens: a wrong scale shifts them all alike
    for (int n = 0; n < 3; ++n) {
      CAPTURE(n);
      const double var = sum2[size_t(n)] - sum[size_t(n)] * sum[size_t(n)], rv = ref.x_var[size_t(n)];
      CHECK(std::abs(sum[size_t(n)] - ref.x_mean[size_t(n)]) < 4 * std::sqrt(rv / D + rv / Kref) + 1e-5);
      dvar += var - rv, dvar_se2 += (ref.x_m4[size_t(n)] - rv * rv) * (1.0 / D + 1.0 / Kref);
    }
    CHECK(std::abs(dvar) < 4 * std::sqrt(dvar_se2) + 1e-5);
  }
  omp_set_num_threads(saved);
}

namespace {

struct Step {
  double objective, value, kl;
  Vec grad;  // every parameter, in ParamStore order
};

// attention_objective of variant v at update `step` on t, and the gradient of its objective.
Step run_objective(Tiny& t, AttnVariant v, const ObjectiveOptions& opt, uint64_t seed = 3) {
  Tape<float> tape;
  t.ps.zero_grad();
  Ctx c{tape, t.ps, true, CounterRng(seed, 4), 0.f};
  Tiny::Built b = t.build(c);
  const ObjectiveTerms o = attention_objective(c, v, b.head, b.d, Tiny::y, Tiny::mask, opt);
  tape.backward(o.objective);
  return {o.objective.item(), o.value_sum, o.kl_sum, Vec(t.ps.grads(), t.ps.grads() + t.ps.size())};
}

size_t offset(const Tiny& t, int id) { return t.ps.params()[size_t(id)].offset; }

}  // namespace

TEST_CASE("families: warm start trains p, f on the exact marginal and q on -KL(q || posterior), then the ELBO") {
  Tiny t(AttnVariant::var_enum, VariantConfig{}, 8);
  ObjectiveOptions opt;
  opt.warm_start = 3, opt.step = 0;
  const Step warm = run_objective(t, AttnVariant::var_enum, opt), marg = run_objective(t, AttnVariant::marginal, opt);
  opt.step = 3;
  const Step after = run_objective(t, AttnVariant::var_enum, opt);
  // In double: the exact posterior π ∝ p f, the ELBO and KL(q ‖ p) per real token, and the gradients
  //   warm:  ∂/∂s_j = π_j − p_j        after: ∂/∂s_j = q_j − p_j        both: ∂/∂u_j = q_j (log p_j f_j − log q_j − ELBO)
  Vec g_warm(Tiny::N * Tiny::S, 0.0), g_after(g_warm), g_q(g_warm);
  double elbo = 0, kl = 0;
  for (int n = 0; n < Tiny::N; ++n) {
    if (Tiny::mask[n] == 0) continue;
    const Vec p = t.softmax_row(t.scores, n), q = t.softmax_row(t.q_scores, n);
    const int L = Tiny::len[n / Tiny::T];
    Vec joint(static_cast<size_t>(L));
    double e = 0;
    for (int s = 0; s < L; ++s) {
      joint[size_t(s)] = std::log(p[size_t(s)]) + t.log_f_at(n, s);
      e += q[size_t(s)] * (joint[size_t(s)] - std::log(q[size_t(s)]));
      kl += q[size_t(s)] * (std::log(q[size_t(s)]) - std::log(p[size_t(s)]));
    }
    const double log_marginal = log_mean_exp(joint) + std::log(double(L));
    elbo += e;
    for (int s = 0; s < L; ++s) {
      g_warm[size_t(n * Tiny::S + s)] = std::exp(joint[size_t(s)] - log_marginal) - p[size_t(s)];
      g_after[size_t(n * Tiny::S + s)] = q[size_t(s)] - p[size_t(s)];
      g_q[size_t(n * Tiny::S + s)] = q[size_t(s)] * (joint[size_t(s)] - std::log(q[size_t(s)]) - e);
    }
  }
  const size_t so = offset(t, t.scores), qo = offset(t, t.q_scores), ns = size_t(Tiny::N * Tiny::S);
  for (size_t k = 0; k < ns; ++k) {
    CHECK(warm.grad[so + k] == doctest::Approx(g_warm[k]).epsilon(1e-4).scale(1e-3));
    CHECK(after.grad[so + k] == doctest::Approx(g_after[k]).epsilon(1e-4).scale(1e-3));
    CHECK(warm.grad[qo + k] == doctest::Approx(g_q[k]).epsilon(1e-4).scale(1e-3));
    CHECK(after.grad[qo + k] == doctest::Approx(g_q[k]).epsilon(1e-4).scale(1e-3));
  }
  for (size_t i = 0; i < warm.grad.size(); ++i)  // p and f: exactly the marginal's gradient
    if (i < qo || i >= qo + ns) CHECK(warm.grad[i] == doctest::Approx(marg.grad[i]).epsilon(1e-5).scale(1e-5));
  CHECK(warm.value == doctest::Approx(elbo).epsilon(1e-5));  // reported: the ELBO throughout
  CHECK(warm.kl == doctest::Approx(kl).epsilon(1e-5));
  CHECK(after.objective == doctest::Approx(elbo).epsilon(1e-5));
  CHECK(after.value == doctest::Approx(elbo).epsilon(1e-5));
  // Every categorical q variant shares the warm start (its objective does not depend on the estimator).
  opt.step = 0;
  for (AttnVariant v : {AttnVariant::var_sample, AttnVariant::var_gumbel, AttnVariant::var_rws}) {
    const Step other = run_objective(t, v, opt);
    for (size_t i = 0; i < warm.grad.size(); ++i) CHECK(other.grad[i] == doctest::Approx(warm.grad[i]).epsilon(1e-6));
  }

  // var-dirichlet: the Jensen bound E_{Dir(α_p)} log f with z from the prior; q gets no gradient and no KL.
  Tiny d(AttnVariant::var_dirichlet, VariantConfig{}, 8);
  constexpr int D = 200, Kref = 5000;
  const Reference ref = reference(d, AttnVariant::var_dirichlet, Kref, 9);
  double mean = 0, mean2 = 0;
  for (int k = 0; k < D; ++k) {
    const Step s = run_objective(d, AttnVariant::var_dirichlet, opt, 50 + uint64_t(k));
    CHECK(s.kl == 0);
    if (k == 0)
      for (size_t i = offset(d, d.q_scores); i < offset(d, d.q_scores) + ns; ++i) CHECK(s.grad[i] == 0);
    mean += s.value / D, mean2 += s.value * s.value / D;
  }
  CHECK(std::abs(mean - ref.jensen_prior) < 4 * std::sqrt((mean2 - mean * mean) * (1.0 / D + 1.0 / Kref)) + 1e-3);
  opt.step = 3;
  const Step s = run_objective(d, AttnVariant::var_dirichlet, opt);
  double q_norm = 0;
  for (size_t i = offset(d, d.q_scores); i < offset(d, d.q_scores) + ns; ++i) q_norm += std::abs(s.grad[i]);
  CHECK(q_norm > 1e-3);
  CHECK(s.kl == doctest::Approx(ref.kl).epsilon(1e-4));
}

TEST_CASE("families: gauss-ctx and bam-* report the ELBO with KL weight 1; the weight follows --att-kl and the ramp") {
  for (AttnVariant v : {AttnVariant::gauss_ctx, AttnVariant::bam_weibull, AttnVariant::bam_lognormal,
                        AttnVariant::var_dirichlet}) {
    CAPTURE(variant_info(v).name);
    Tiny t(v, VariantConfig{}, 13);
    ObjectiveOptions opt;
    const Step base = run_objective(t, v, opt);
    CHECK(base.kl > 0);
    for (float att_kl : {-1.f, 0.f, 0.3f, 2.f}) {
      for (int64_t step : {int64_t(0), int64_t(4500), int64_t(5500)}) {
        opt.att_kl = att_kl, opt.kl_anneal = 4500, opt.step = step;
        const double w0 = att_kl >= 0 ? att_kl : v == AttnVariant::gauss_ctx ? 0.1 : 1.0;
        const double w = w0 * (std::tanh((double(step) - 4500) / 1000) + 1) / 2;  // Bahuleyan et al.'s ramp
        CAPTURE(att_kl);
        CAPTURE(step);
        if (v != AttnVariant::var_dirichlet) CHECK(continuous_kl_weight(v, opt) == doctest::Approx(w).epsilon(1e-6));
        const Step s = run_objective(t, v, opt);
        CHECK(s.value == base.value);  // the same draw: value and KL do not depend on the weight
        CHECK(s.kl == base.kl);
        const double used = v == AttnVariant::var_dirichlet ? 1.0 : w;  // Dirichlet: always the ELBO
        CHECK(s.objective == doctest::Approx(s.value + (1 - used) * s.kl).epsilon(1e-5));
      }
    }
    opt.kl_anneal = 0, opt.att_kl = 0.3f;
    if (v != AttnVariant::var_dirichlet) CHECK(continuous_kl_weight(v, opt) == 0.3f);
  }
}

TEST_CASE("families: a training step's objective and gradients are identical with 1 and 2 threads") {
  const int saved = omp_get_max_threads();
  for (AttnVariant v : {AttnVariant::var_dirichlet, AttnVariant::gauss_ctx, AttnVariant::bam_weibull,
                        AttnVariant::bam_lognormal, AttnVariant::structured, AttnVariant::sigmoid}) {
    CAPTURE(variant_info(v).name);
    Tiny t(v, VariantConfig{}, 17);
    omp_set_num_threads(1);
    const Step one = run_objective(t, v, ObjectiveOptions{});
    omp_set_num_threads(2);
    const Step two = run_objective(t, v, ObjectiveOptions{});
    CHECK(one.objective == two.objective);
    CHECK(one.grad == two.grad);
    double norm = 0;
    for (double g : two.grad) norm += std::abs(g);
    CHECK(norm > 0);
  }
  omp_set_num_threads(saved);
}

TEST_CASE("families: sampled evaluation does not depend on what the tape already holds (memory safety under ASan)") {
  // Var::shape() points into the tape's node list, which reallocates as it grows: a shape read across the creation
  // of a node is a use after free. Padding the tape with 0..70 nodes first makes every node of the evaluation fall
  // on a reallocation once; ASan reports the bad read, and the figures must not change in any build.
  for (const SampledCase& sc : sampled_cases()) {
    CAPTURE(sc.name);
    std::unique_ptr<Tiny> tp = tiny_for(sc, 2, 21);
    AttentionEvalSums first;
    for (int pad = 0; pad <= 70; ++pad) {
      Tape<float> tape;
      for (int i = 0; i < pad; ++i) tape.full(Shape{1}, 0.f);
      Ctx c{tape, tp->ps, false, CounterRng(4, 4), 0.f};
      NoGrad<float> no_grad(tape);
      Tiny::Built b = tp->build(c);
      const AttentionEvalSums e = attention_eval_batch(c, sc.v, b.head, b.d, Tiny::y, Tiny::mask, 0);
      if (pad == 0) first = e;
      CHECK(e.log_lik == first.log_lik);
      CHECK(e.elbo == first.elbo);
    }
  }
}
