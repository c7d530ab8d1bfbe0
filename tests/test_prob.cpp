// The distributions of src/prob, each on its own: sample moments against their formulas, closed-form KL against Monte
// Carlo, reparameterised gradients against finite differences (of the quantile at fixed u, and of expectations on
// fixed noise), CRF log-partition and marginals against brute-force enumeration, and 1- vs 2-thread determinism.
// Statistical checks allow 5 standard errors (computed from the distribution's own moments where they are known):
// the seeds are fixed, so each check is deterministic, and 5σ keeps it from depending on the seed chosen.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <vector>

#include "prob/gradcheck_cases.hpp"
#include "autodiff/ops.hpp"
#include "prob/dirichlet.hpp"
#include "prob/gamma.hpp"
#include "prob/gaussian.hpp"
#include "prob/incomplete_gamma.hpp"
#include "prob/linear_chain_crf.hpp"
#include "prob/lognormal.hpp"
#include "prob/weibull.hpp"
#include "tensor/special_math.hpp"

using namespace lava;

namespace {

using V = Var<double>;
using Samples = std::vector<double>;

struct Stats {
  double mean = 0, var = 0;  // sample mean and unbiased sample variance
  double n = 0;
  double se() const { return std::sqrt(var / n); }  // standard error of the mean
};

Stats stats_of(const Samples& x) {
  Stats s;
  s.n = double(x.size());
  for (double v : x) s.mean += v;
  s.mean /= s.n;
  for (double v : x) s.var += (v - s.mean) * (v - s.mean);
  s.var /= s.n - 1;
  return s;
}

// Sample mean and variance of x against the exact mean m, and the raw moments E[x²], E[x³], E[x⁴] (for the standard
// error of the variance, √((μ₄ − σ⁴)/n) with μ₄ the fourth central moment).
void check_moments(const Samples& x, double m, double e2, double e3, double e4) {
  const Stats s = stats_of(x);
  const double var = e2 - m * m, mu4 = e4 - 4 * m * e3 + 6 * m * m * e2 - 3 * m * m * m * m;
  INFO("sample mean ", s.mean, " vs ", m, ", sample variance ", s.var, " vs ", var);
  CHECK(std::abs(s.mean - m) <= 5 * std::sqrt(var / s.n));
  CHECK(std::abs(s.var - var) <= 5 * std::sqrt((mu4 - var * var) / s.n));
}

// An estimate with its standard error against an exact value (plus a small absolute allowance).
void check_estimate(double est, double se, double exact, double slack = 0) {
  INFO("estimate ", est, " ± ", se, " vs exact ", exact);
  CHECK(std::abs(est - exact) <= 5 * se + slack);
}

Samples values(V x) { return Samples(x.val(), x.val() + x.numel()); }

// Samples of an op run on a leaf filled with `fill` (shape `s`), in no-grad mode.
Samples draw(const Shape& s, const std::vector<double>& fill, const std::function<V(V)>& op) {
  Tape<double> tape;
  NoGrad<double> off(tape);
  std::vector<double> data(size_t(s.numel()));
  for (size_t i = 0; i < data.size(); ++i) data[i] = fill[i % fill.size()];
  return values(op(tape.input(s, data.data())));
}

double gamma_fn(double x) { return std::exp(log_gamma(x)); }

}  // namespace

TEST_CASE("prob: gamma samples have mean α, variance α and E[log z] = ψ(α)") {
  const CounterRng rng(1, stream_id("test/gamma"));
  for (double a : {0.05, 0.3, 1.0, 4.5, 60.0}) {
    CAPTURE(a);
    Samples log_z = draw(Shape{10000}, {a}, [&](V x) { return gamma_log_sample(x, rng); });
    Samples z(log_z.size());
    for (size_t i = 0; i < z.size(); ++i) z[i] = std::exp(log_z[i]);
    // Gamma(a, 1): E z^r = a(a+1)…(a+r−1).
    check_moments(z, a, a * (a + 1), a * (a + 1) * (a + 2), a * (a + 1) * (a + 2) * (a + 3));
    check_estimate(stats_of(log_z).mean, std::sqrt(trigamma_fn(a) / 10000), digamma_fn(a));
  }
}

TEST_CASE("prob: a gamma sample's gradient is the derivative of the quantile at the sample's own u") {
  // Implicit reparameterisation: d log z/dα = ∂/∂α log P⁻¹(α, u) at u = P(α, z). Finite differences of the quantile
  // (4-point stencil) on the same u, per sample, including the boosted α < 1, tiny α and large α.
  const CounterRng rng(2, stream_id("test/gamma"));
  for (double a : {1e-3, 0.3, 1.0, 4.5, 60.0, 5000.0}) {
    CAPTURE(a);
    Tape<double> tape;
    std::vector<double> alpha(40, a);
    V x = tape.input(Shape{40}, alpha.data(), true);
    V y = gamma_log_sample(x, rng);
    tape.backward(sum_all(y));
    double worst = 0;
    for (int64_t i = 0; i < 40; ++i) {
      const double u = gamma_p(a, y.val()[i]), h = 1e-4 * a;
      auto q = [&](double d) { return gamma_log_quantile(a + d, u); };
      const double fd = (8 * (q(h) - q(-h)) - (q(2 * h) - q(-2 * h))) / (12 * h);
      worst = std::max(worst, std::abs(x.grad()[i] - fd) / std::abs(fd));
    }
    CHECK(worst < 1e-6);
  }
}

TEST_CASE("prob: reparameterised gamma gradients match finite differences of the expectation on fixed noise") {
  // d/dα E[f(z)]: the mean pathwise gradient f'(z)·dz/dα (dz/dα = z · d log z/dα from the op's backward), the
  // central difference of sample means at α ± h on the same Marsaglia–Tsang noise, and the exact value must agree.
  // f = log z (E = ψ(α)) and f = z² (E = α² + α).
  const CounterRng rng(3, stream_id("test/gamma"));
  const int64_t n = 20000;
  for (double a : {0.4, 2.5}) {
    CAPTURE(a);
    Tape<double> tape;
    std::vector<double> alpha(static_cast<size_t>(n), a);
    V x = tape.input(Shape{n}, alpha.data(), true);
    V log_z = gamma_log_sample(x, rng);
    tape.backward(sum_all(log_z));
    const double h = 0.01 * a;
    const Samples up = draw(Shape{n}, {a + h}, [&](V v) { return gamma_log_sample(v, rng); });
    const Samples down = draw(Shape{n}, {a - h}, [&](V v) { return gamma_log_sample(v, rng); });
    for (bool square_z : {false, true}) {
      CAPTURE(square_z);
      auto f = [&](double lz) { return square_z ? std::exp(2 * lz) : lz; };
      const double exact = square_z ? 2 * a + 1 : trigamma_fn(a);
      Samples path(static_cast<size_t>(n)), diff(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const double lz = log_z.val()[i], dlz = x.grad()[i];
        path[size_t(i)] = square_z ? 2 * std::exp(2 * lz) * dlz : dlz;
        diff[size_t(i)] = (f(up[size_t(i)]) - f(down[size_t(i)])) / (2 * h);
      }
      const Stats p = stats_of(path), fd = stats_of(diff);
      check_estimate(p.mean, p.se(), exact);
      check_estimate(fd.mean, fd.se(), exact, 1e-3 * exact);  // O(h²) bias of the central difference
      check_estimate(p.mean - fd.mean, std::hypot(p.se(), fd.se()), 0);
    }
  }
}

TEST_CASE("prob: bad gamma shapes give NaN; tiny shapes underflow to z = 0 with finite log z and gradients") {
  CHECK(std::isnan(gamma_log_draw(0.0, CounterRng(1, 1), 0)));
  CHECK(std::isnan(gamma_log_draw(-2.0, CounterRng(1, 1), 0)));
  CHECK(std::isnan(gamma_log_draw(std::nan(""), CounterRng(1, 1), 0)));
  Tape<double> tape;
  std::vector<double> alpha = {std::exp(-10.0), 1e-6, 0.5};
  V x = tape.input(Shape{3}, alpha.data(), true);
  V y = gamma_log_sample(x, CounterRng(4, 0));
  tape.backward(sum_all(y));
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(std::isfinite(y.val()[i]));
    CHECK(std::isfinite(x.grad()[i]));
  }
  CHECK(std::exp(y.val()[0]) < 1e-300);
  CHECK(x.grad()[0] > 0);  // log z ≈ log(u)/α grows towards 0 as α grows

  // A Dirichlet row with masked positions (α = e^{-10}, as the paper's code pads): they get weight ~0, the row sums
  // to 1, and every gradient is finite.
  const std::vector<double> masked = {std::exp(-10.0), 2.0, std::exp(-10.0), 0.7};
  V a = tape.input(Shape{1, 4}, masked.data(), true);
  V w = dirichlet_sample(a, CounterRng(4, 1));
  const std::vector<double> weights = {0.3, -1.2, 2.0, 0.5};
  tape.backward(sum_all(mul(w, tape.input(Shape{4}, weights.data()))));
  CHECK(w.val()[0] < 1e-6);  // P(z > 1e-6) ≈ α·log(1e6) < 1e-3 for α = e^{-10}
  CHECK(w.val()[2] < 1e-6);
  CHECK(w.val()[0] + w.val()[1] + w.val()[2] + w.val()[3] == doctest::Approx(1.0).epsilon(1e-15));
  for (int k = 0; k < 4; ++k) CHECK(std::isfinite(a.grad()[k]));
}

TEST_CASE("prob: Dirichlet samples lie on the simplex with the Dirichlet mean and variance") {
  const CounterRng rng(5, stream_id("test/dirichlet"));
  for (const std::vector<double>& a : {std::vector<double>{0.3, 1, 4}, std::vector<double>{20, 5, 0.1, 2}}) {
    const int64_t K = int64_t(a.size()), n = 10000;
    const Samples x = draw(Shape{n, K}, a, [&](V v) { return dirichlet_sample(v, rng); });
    double a0 = 0, worst_sum = 0;
    for (double ak : a) a0 += ak;
    for (int64_t r = 0; r < n; ++r) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += x[size_t(r * K + k)];
      worst_sum = std::max(worst_sum, std::abs(s - 1));
    }
    CHECK(worst_sum < 1e-12);
    for (int64_t k = 0; k < K; ++k) {
      CAPTURE(k);
      Samples xk(static_cast<size_t>(n));
      for (int64_t r = 0; r < n; ++r) xk[size_t(r)] = x[size_t(r * K + k)];
      // The marginal x_k ~ Beta(a_k, a0 − a_k): E x^r = Π_{j<r} (a_k + j)/(a0 + j).
      double e[5] = {1, 0, 0, 0, 0};
      for (int r = 1; r <= 4; ++r) e[r] = e[r - 1] * (a[size_t(k)] + r - 1) / (a0 + r - 1);
      check_moments(xk, e[1], e[2], e[3], e[4]);
    }
  }
}

TEST_CASE("prob: Dirichlet reparameterised gradients match the exact and the finite-difference gradient of E[log x]") {
  // L = Σ_k w_k E[log x_k] = Σ_k w_k (ψ(a_k) − ψ(a0))  ⇒  ∂L/∂a_j = w_j ψ'(a_j) − (Σ_k w_k) ψ'(a0).
  const CounterRng rng(6, stream_id("test/dirichlet"));
  const std::vector<double> a = {0.6, 1.5, 3.0}, w = {1.0, -2.0, 0.5};
  const int64_t K = 3, n = 10000;
  const double a0 = 5.1, wsum = -0.5;
  auto weighted = [&](V x_log) { return mul(x_log, x_log.tape->input(Shape{K}, w.data())); };
  Tape<double> tape;
  std::vector<double> fill(size_t(n * K));
  for (size_t i = 0; i < fill.size(); ++i) fill[i] = a[i % 3];
  V alpha = tape.input(Shape{n, K}, fill.data(), true);
  tape.backward(sum_all(weighted(log(dirichlet_sample(alpha, rng)))));
  for (int64_t j = 0; j < K; ++j) {
    CAPTURE(j);
    Samples g(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) g[size_t(r)] = alpha.grad()[r * K + j];
    const Stats path = stats_of(g);
    const double exact = w[size_t(j)] * trigamma_fn(a[size_t(j)]) - wsum * trigamma_fn(a0);
    check_estimate(path.mean, path.se(), exact);
    if (j != 0) continue;  // finite differences for the boosted coordinate (a_0 < 1) only: each costs two runs
    // Finite difference of the sample mean at a_j ± h on the same noise.
    const double h = 0.01 * a[size_t(j)];
    auto rows_at = [&](double d) {
      std::vector<double> b = a;
      b[size_t(j)] += d;
      return draw(Shape{n, K}, b, [&](V v) { return sum(weighted(log(dirichlet_sample(v, rng))), 1); });
    };
    const Samples up = rows_at(h), down = rows_at(-h);
    Samples diff(static_cast<size_t>(n));
    for (size_t i = 0; i < diff.size(); ++i) diff[i] = (up[i] - down[i]) / (2 * h);
    const Stats fd = stats_of(diff);
    check_estimate(fd.mean, fd.se(), exact, 1e-3 * std::abs(exact));
    check_estimate(path.mean - fd.mean, std::hypot(path.se(), fd.se()), 0);
  }
}

TEST_CASE("prob: KL(Dir‖Dir) matches Monte Carlo, vanishes for equal arguments and is positive otherwise") {
  const std::vector<double> a = {0.7, 2.0, 3.5}, b = {1.5, 1.0, 0.6};
  const int64_t K = 3, n = 10000;
  Tape<double> tape;
  const double kl = kl_dirichlet(tape.input(Shape{K}, a.data()), tape.input(Shape{K}, b.data())).item();
  const double kl_self = kl_dirichlet(tape.input(Shape{K}, a.data()), tape.input(Shape{K}, a.data())).item();
  CHECK(std::abs(kl_self) < 1e-12);
  CHECK(kl > 0.1);
  // log Dir(x; a) − log Dir(x; b) = C + Σ_k (a_k − b_k) log x_k.
  double c = log_gamma(6.2) - log_gamma(3.1);
  for (int64_t k = 0; k < K; ++k) c += log_gamma(b[size_t(k)]) - log_gamma(a[size_t(k)]);
  const Samples x = draw(Shape{n, K}, a, [](V v) { return dirichlet_sample(v, CounterRng(7, 0)); });
  Samples ratio(size_t(n), c);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < K; ++k) ratio[size_t(r)] += (a[size_t(k)] - b[size_t(k)]) * std::log(x[size_t(r * K + k)]);
  const Stats mc = stats_of(ratio);
  check_estimate(mc.mean, mc.se(), kl);
}

TEST_CASE("prob: Weibull samples have the Weibull moments and KL(Weibull‖Gamma) matches Monte Carlo") {
  const CounterRng rng(8, stream_id("test/weibull"));
  const double lam = 1.3;
  for (double k : {0.7, 3.0, 50.0}) {
    CAPTURE(k);
    const Samples s = draw(Shape{20000}, {lam}, [&](V l) { return weibull_sample(l.tape->full(Shape{}, k), l, rng); });
    double e[5];  // E S^r = λ^r Γ(1 + r/k)
    for (int r = 0; r <= 4; ++r) e[r] = std::pow(lam, r) * gamma_fn(1 + r / k);
    check_moments(s, e[1], e[2], e[3], e[4]);
  }
  // KL(Weibull(k, λ) ‖ Gamma(α, β)) = E_q[log q(S) − log p(S)] with
  //   log q = log k − log λ + (k−1)(log S − log λ) − (S/λ)^k,  log p = α log β − log Γ(α) + (α−1) log S − βS.
  const double k = 2, l = 1.5, al = 3, be = 2;
  Tape<double> tape;
  auto c = [&](double v) { return tape.full(Shape{}, v); };
  const double kl = kl_weibull_gamma(c(k), c(l), c(al), c(be)).item();
  const Samples s = draw(Shape{20000}, {l}, [&](V lv) { return weibull_sample(lv.tape->full(Shape{}, k), lv, rng); });
  Samples ratio(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const double ls = std::log(s[i]);
    ratio[i] = std::log(k) - std::log(l) + (k - 1) * (ls - std::log(l)) - std::pow(s[i] / l, k) -
               (al * std::log(be) - log_gamma(al) + (al - 1) * ls - be * s[i]);
  }
  const Stats mc = stats_of(ratio);
  check_estimate(mc.mean, mc.se(), kl);
}

TEST_CASE("prob: Weibull pathwise gradients of E[S] match the exact derivatives; a broadcast k sums them") {
  // E[S] = λΓ(1 + 1/k): ∂/∂k = −λΓ(1 + 1/k)ψ(1 + 1/k)/k², ∂/∂λ = Γ(1 + 1/k).
  const CounterRng rng(9, stream_id("test/weibull"));
  const int64_t n = 20000;
  const double k = 1.7, lam = 0.8, G = gamma_fn(1 + 1 / k);
  Tape<double> tape;
  std::vector<double> ks(size_t(n), k), lams(size_t(n), lam);
  V kv = tape.input(Shape{n}, ks.data(), true), lv = tape.input(Shape{n}, lams.data(), true);
  V kb = tape.input(Shape{}, &k, true);
  tape.backward(add(sum_all(weibull_sample(kv, lv, rng)), sum_all(weibull_sample(kb, lv, rng))));
  const Stats dk = stats_of(Samples(kv.grad(), kv.grad() + n));
  check_estimate(dk.mean, dk.se(), -lam * G * digamma_fn(1 + 1 / k) / (k * k));
  const Stats dl = stats_of(Samples(lv.grad(), lv.grad() + n));  // both samplers feed λ: twice the derivative
  check_estimate(dl.mean / 2, dl.se() / 2, G);
  CHECK(kb.grad()[0] == doctest::Approx(dk.mean * double(n)).epsilon(1e-12));
}

TEST_CASE("prob: Gaussian and log-normal samples have their moments, gradients and closed-form KLs") {
  const CounterRng rng(10, stream_id("test/gaussian"));
  const int64_t n = 20000;
  const double mu = -0.4, sd = 1.7;
  auto sample_with = [&](auto sampler, double m, double s) {
    return draw(Shape{n}, {m}, [&](V mv) { return sampler(mv, mv.tape->full(Shape{}, s), rng); });
  };
  const Samples z = sample_with([](V m, V s, CounterRng r) { return gaussian_sample(m, s, r); }, mu, sd);
  const double v = sd * sd;
  check_moments(z, mu, mu * mu + v, mu * mu * mu + 3 * mu * v, std::pow(mu, 4) + 6 * mu * mu * v + 3 * v * v);
  const double lm = 0.3, ls = 0.5;
  const Samples s = sample_with([](V m, V sg, CounterRng r) { return lognormal_sample(m, sg, r); }, lm, ls);
  double e[5];  // E S^r = exp(rμ + r²σ²/2)
  for (int r = 0; r <= 4; ++r) e[r] = std::exp(r * lm + r * r * ls * ls / 2);
  check_moments(s, e[1], e[2], e[3], e[4]);

  // Pathwise gradients of E[S] = exp(μ + σ²/2): ∂/∂μ = E[S], ∂/∂σ = σ E[S].
  Tape<double> tape;
  std::vector<double> ms(size_t(n), lm), ss(size_t(n), ls);
  V mv = tape.input(Shape{n}, ms.data(), true), sv = tape.input(Shape{n}, ss.data(), true);
  tape.backward(sum_all(lognormal_sample(mv, sv, rng)));
  const Stats dm = stats_of(Samples(mv.grad(), mv.grad() + n)), dsd = stats_of(Samples(sv.grad(), sv.grad() + n));
  check_estimate(dm.mean, dm.se(), e[1]);
  check_estimate(dsd.mean, dsd.se(), ls * e[1]);

  // KL(N(μq, σq²) ‖ N(μp, σp²)) against E_q[log q(z) − log p(z)]; the log-normal KL is the same number.
  const double mq = 0.5, sq = 0.7, mp = -0.3, sp = 1.2;
  auto c = [&](double x) { return tape.full(Shape{}, x); };
  const double kl = kl_gaussian(c(mq), c(sq), c(mp), c(sp)).item();
  CHECK(kl_lognormal(c(mq), c(sq), c(mp), c(sp)).item() == kl);
  CHECK(std::abs(kl_gaussian(c(mq), c(sq), c(mq), c(sq)).item()) < 1e-15);
  const Samples zq = sample_with([](V m, V sg, CounterRng r) { return gaussian_sample(m, sg, r); }, mq, sq);
  Samples ratio(zq.size());
  for (size_t i = 0; i < zq.size(); ++i) {
    const double a = (zq[i] - mq) / sq, b = (zq[i] - mp) / sp;
    ratio[i] = std::log(sp / sq) - 0.5 * a * a + 0.5 * b * b;
  }
  const Stats mc = stats_of(ratio);
  check_estimate(mc.mean, mc.se(), kl);
  // The same KL as an expectation over log-normal samples S with log-normal densities
  // log p(S) = −log S − log σ − (log S − μ)²/(2σ²) + const.
  const Samples sq_samples = sample_with([](V m, V sg, CounterRng r) { return lognormal_sample(m, sg, r); }, mq, sq);
  auto log_lognormal = [](double x, double m, double sg) {
    const double t = (std::log(x) - m) / sg;
    return -std::log(x) - std::log(sg) - 0.5 * t * t;
  };
  for (size_t i = 0; i < sq_samples.size(); ++i)
    ratio[i] = log_lognormal(sq_samples[i], mq, sq) - log_lognormal(sq_samples[i], mp, sp);
  const Stats mc_log = stats_of(ratio);
  check_estimate(mc_log.mean, mc_log.se(), kl_lognormal(c(mq), c(sq), c(mp), c(sp)).item());
}

TEST_CASE("prob: every distribution op is in the gradient-check catalogue and passes it") {
  const std::set<std::string> prob_ops = {"gamma_quantile",  "kl_dirichlet",     "weibull_sample",
                                          "kl_weibull_gamma", "gaussian_sample", "kl_gaussian",
                                          "lognormal_sample", "kl_lognormal",    "crf_log_partition",
                                          "crf_marginals"};
  std::set<std::string> seen;
  for (const GradCase& c : all_grad_cases()) {
    if (!prob_ops.count(c.op)) continue;
    const GradCheckResult r = gradcheck(c, GradCheckOptions{});
    INFO(r.op, " ", r.shape, ": max rel err ", r.max_rel_err, ", max abs err ", r.max_abs_err);
    CHECK(r.checked > 0);
    CHECK(r.pass);
    seen.insert(c.op);
  }
  CHECK(seen == prob_ops);
}

TEST_CASE("prob: shape errors are reported, not crashed on") {
  Tape<double> tape;
  V u = tape.full(Shape{2, 4, 2}, 0.5), a = tape.full(Shape{3, 4}, 1.0), b = tape.full(Shape{3}, 1.0);
  CHECK_THROWS_AS(crf_log_partition(u, tape.full(Shape{2, 4, 2, 2}, 0.0)), std::logic_error);
  CHECK_THROWS_AS(crf_marginals(u, tape.full(Shape{3, 3}, 0.0)), std::logic_error);
  const int32_t too_long[] = {4, 5};
  CHECK_THROWS_AS(crf_log_partition(u, tape.full(Shape{2, 2}, 0.0), too_long), std::logic_error);
  CHECK_THROWS_AS(kl_dirichlet(a, tape.full(Shape{4, 3}, 1.0)), std::logic_error);
  CHECK_THROWS_AS(gaussian_sample(a, b, CounterRng(1, 1)), std::logic_error);
  CHECK_THROWS_AS(kl_weibull_gamma(a, a, b, a), std::logic_error);
}

namespace {

// Forward and backward of every sampler, KL and CRF op in float at sizes above their parallel thresholds; returns
// every output value and every leaf gradient, concatenated.
std::vector<float> run_prob_ops() {
  Tape<float> tape;
  std::vector<float> out;
  auto leaf = [&](const Shape s, float lo, float hi, uint64_t stream) {  // by value: y.shape() lives in the node list
    std::vector<float> v(size_t(s.numel()));  // a golden-ratio sequence: spread out, and cheap under ASan
    for (size_t i = 0; i < v.size(); ++i) {
      const double t = double(i + 1) * 0.6180339887498949 + double(stream) * 0.1234;
      v[i] = float(lo + (hi - lo) * (t - std::floor(t)));
    }
    return tape.input(s, v.data(), true);
  };
  const CounterRng rng(15, stream_id("test/threads"));
  const int64_t n = 40000;
  Var<float> alpha = leaf(Shape{1024, 4}, 0.05f, 8.f, 1), k = leaf(Shape{}, 1.f, 3.f, 2);
  Var<float> lam = leaf(Shape{n}, 0.5f, 2.f, 3), mu = leaf(Shape{n}, -1.f, 1.f, 4), sd = leaf(Shape{n}, 0.2f, 2.f, 5);
  Var<float> b2 = leaf(Shape{1024, 4}, 0.05f, 8.f, 6), unary = leaf(Shape{64, 10, 2}, -2.f, 2.f, 7);
  Var<float> pair = leaf(Shape{2, 2}, -1.f, 1.f, 8), pairs = leaf(Shape{64, 9, 2, 2}, -1.f, 1.f, 9);
  const std::vector<int32_t> lens(64, 7);
  std::vector<Var<float>> ys = {
      dirichlet_sample(alpha, rng),        gamma_sample(alpha, rng.child(1)), kl_dirichlet(alpha, b2),
      weibull_sample(k, lam, rng),         kl_weibull_gamma(k, lam, sd, k),   gaussian_sample(mu, sd, rng),
      lognormal_sample(mu, k, rng),        kl_gaussian(mu, sd, lam, k),       crf_log_partition(unary, pair),
      crf_marginals(unary, pairs, lens.data()), crf_marginals(unary, pair)};
  Var<float> total = tape.full(Shape{}, 0.f);
  for (Var<float> y : ys) {
    total = add(total, sum_all(mul(y, leaf(y.shape(), -1.f, 1.f, 10))));
    out.insert(out.end(), y.val(), y.val() + y.numel());
  }
  tape.backward(total);
  for (Var<float> x : {alpha, k, lam, mu, sd, b2, unary, pair, pairs})
    out.insert(out.end(), x.grad(), x.grad() + x.numel());
  return out;
}

}  // namespace

TEST_CASE("prob: samples, KLs, CRF outputs and all gradients are bit-identical with 1 and 2 threads") {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<float> one = run_prob_ops();
  omp_set_num_threads(2);
  const std::vector<float> two = run_prob_ops();
  omp_set_num_threads(saved);
  REQUIRE(one.size() == two.size());
  int64_t differ = 0, non_finite = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    differ += std::memcmp(&one[i], &two[i], sizeof(float)) != 0;
    non_finite += !std::isfinite(one[i]);
  }
  CHECK(differ == 0);
  CHECK(non_finite == 0);
}
