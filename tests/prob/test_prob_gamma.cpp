// The gamma and Dirichlet distributions of src/prob (a Dirichlet draw is normalised gamma draws): sample moments
// against their formulas, the gamma sample's gradient against the quantile's finite differences at fixed u,
// reparameterised gradients against finite differences of expectations on fixed noise, bad and tiny shapes, and
// KL(Dir‖Dir) against Monte Carlo. Statistical checks allow 5 standard errors (tests/prob/prob_checks.hpp). The other
// distributions: tests/prob/test_prob.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autodiff/ops.hpp"
#include "prob/dirichlet.hpp"
#include "prob/gamma.hpp"
#include "prob/incomplete_gamma.hpp"
#include "prob_checks.hpp"
#include "tensor/special_math.hpp"

using namespace lava;
using namespace prob_test;

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