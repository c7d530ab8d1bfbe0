#pragma once
// The Monte Carlo checks of the distribution tests (tests/prob/test_prob.cpp, tests/prob/test_prob_gamma.cpp): sample
// moments and estimates against exact values within 5 standard errors, and the samples of an op run in no-grad mode.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "autodiff/tape.hpp"
#include "tensor/shape.hpp"

namespace prob_test {

using namespace lava;

using V = Var<double>;
using Samples = std::vector<double>;

struct Stats {
  double mean = 0, var = 0;  // sample mean and unbiased sample variance
  double n = 0;
  double se() const { return std::sqrt(var / n); }  // standard error of the mean
};

inline Stats stats_of(const Samples& x) {
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
inline void check_moments(const Samples& x, double m, double e2, double e3, double e4) {
  const Stats s = stats_of(x);
  const double var = e2 - m * m, mu4 = e4 - 4 * m * e3 + 6 * m * m * e2 - 3 * m * m * m * m;
  INFO("sample mean ", s.mean, " vs ", m, ", sample variance ", s.var, " vs ", var);
  CHECK(std::abs(s.mean - m) <= 5 * std::sqrt(var / s.n));
  CHECK(std::abs(s.var - var) <= 5 * std::sqrt((mu4 - var * var) / s.n));
}

// An estimate with its standard error against an exact value (plus a small absolute allowance).
inline void check_estimate(double est, double se, double exact, double slack = 0) {
  INFO("estimate ", est, " ± ", se, " vs exact ", exact);
  CHECK(std::abs(est - exact) <= 5 * se + slack);
}

inline Samples values(V x) { return Samples(x.val(), x.val() + x.numel()); }

// Samples of an op run on a leaf filled with `fill` (shape `s`), in no-grad mode.
inline Samples draw(const Shape& s, const std::vector<double>& fill, const std::function<V(V)>& op) {
  Tape<double> tape;
  NoGrad<double> off(tape);
  std::vector<double> data(size_t(s.numel()));
  for (size_t i = 0; i < data.size(); ++i) data[i] = fill[i % fill.size()];
  return values(op(tape.input(s, data.data())));
}

}  // namespace prob_test
