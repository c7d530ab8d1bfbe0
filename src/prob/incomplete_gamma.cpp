// P(a, x), its shape derivative and its inverse; see incomplete_gamma.hpp for the formulas.
#include "prob/incomplete_gamma.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/special_math.hpp"

namespace lava {

namespace {

constexpr double kEps = 1e-17;     // relative size of the last term kept (below half an ulp)
constexpr int kMaxTerms = 200000;  // enough for a ≈ 1e8 near the mode; a guard against NaN inputs, never reached

// One of the two expansions with its derivative in a.
//   lower: P = e^{a log x − x − log Γ(a+1)} · f,  f = Σ_n c_n,  c_0 = 1, c_n = c_{n−1} · x/(a+n)
//   upper: Q = e^{a log x − x − log Γ(a)} · f,    f = the continued fraction
// df = ∂f/∂a.
struct Expansion {
  bool lower;
  double f, df;
};

// Σ_n c_n and Σ_n ∂c_n/∂a, with ∂c_n/∂a = (∂c_{n−1}/∂a − c_{n−1}/(a+n)) · x/(a+n). Every term is positive and
// every derivative term negative, so neither sum cancels.
Expansion lower_series(double a, double x) {
  double c = 1, dc = 0, f = 1, df = 0;
  for (int n = 1; n < kMaxTerms; ++n) {
    const double r = x / (a + n);
    dc = (dc - c / (a + n)) * r;
    c *= r;
    f += c;
    df += dc;
    if (c <= kEps * f && std::abs(dc) <= kEps * std::abs(df)) break;
  }
  return {true, f, df};
}

// Cephes igamc's continued fraction, evaluated by the three-term recurrence of its convergents p_k/q_k:
//   y = 1 − a + k, z = x + 2 − a + 2k, p_k = z p_{k−1} − k y p_{k−2} (same for q), f = lim p_k/q_k,
// and the same recurrence differentiated in a (∂y/∂a = ∂z/∂a = −1). Rescaled when the convergents grow large.
Expansion upper_fraction(double a, double x) {
  constexpr double kBig = 4.503599627370496e15, kBigInv = 2.22044604925031308085e-16;
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
  double f = pkm1 / qkm1, df = (dpkm1 - f * dqkm1) / qkm1;
  for (int k = 1; k < kMaxTerms; ++k) {
    c += 1, y += 1, z += 2;
    const double yc = y * c;
    const double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    const double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    const double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    bool converged = false;
    if (qk != 0) {
      const double r = pk / qk, dr = (dpk - r * dqk) / qk;
      converged = std::abs(f - r) <= kEps * 4 * std::abs(r) && std::abs(df - dr) <= kEps * 4 * std::abs(dr);
      f = r, df = dr;
    }
    pkm2 = pkm1, pkm1 = pk, qkm2 = qkm1, qkm1 = qk;
    dpkm2 = dpkm1, dpkm1 = dpk, dqkm2 = dqkm1, dqkm1 = dqk;
    if (std::abs(pk) > kBig) {
      pkm2 *= kBigInv, pkm1 *= kBigInv, qkm2 *= kBigInv, qkm1 *= kBigInv;
      dpkm2 *= kBigInv, dpkm1 *= kBigInv, dqkm2 *= kBigInv, dqkm1 *= kBigInv;
    }
    if (converged) break;
  }
  return {false, f, df};
}

Expansion expand(double a, double log_x) {
  const double x = std::exp(log_x);
  if (std::isinf(x)) return {false, 0, 0};  // log x > 709.78: Q = 0 and the fraction ~ 1/x vanish
  return x < a + 1 ? lower_series(a, x) : upper_fraction(a, x);
}

// {P, Q = 1 − P}: the one the expansion gives directly is accurate to rounding, the other comes by subtraction.
struct PQ {
  double p, q;
};
PQ gamma_pq(double a, double log_x) {
  if (std::isinf(log_x)) return log_x < 0 ? PQ{0, 1} : PQ{1, 0};
  const Expansion e = expand(a, log_x);
  const double x = std::exp(log_x);
  if (e.lower) {
    const double p = std::exp(a * log_x - x - log_gamma(a + 1)) * e.f;
    return {p, 1 - p};
  }
  const double q = std::exp(a * log_x - x - log_gamma(a)) * e.f;
  return {1 - q, q};
}

}  // namespace

double gamma_p(double a, double log_x) {
  if (!(a > 0) || std::isnan(log_x)) return std::numeric_limits<double>::quiet_NaN();
  return gamma_pq(a, log_x).p;
}

// lower: P = A/a · f with A = e^{a log x − x − log Γ(a)}, ∂P/∂a = A/a · ((log x − ψ(a+1)) f + df), x p(x) = A
//        ⇒ d log x/da = −((log x − ψ(a+1)) f + df) / a
// upper: Q = A · f, ∂P/∂a = −∂Q/∂a = −A · ((log x − ψ(a)) f + df)
//        ⇒ d log x/da = (log x − ψ(a)) f + df
double gamma_dlogx_da(double a, double log_x) {
  if (!(a > 0) || !std::isfinite(a) || !std::isfinite(log_x)) return std::numeric_limits<double>::quiet_NaN();
  const Expansion e = expand(a, log_x);
  if (e.lower) return -((log_x - digamma_fn(a + 1)) * e.f + e.df) / a;
  return (log_x - digamma_fn(a)) * e.f + e.df;
}

// Solve g(t) = P(a, e^t) − u = 0 for t = log x. g is increasing with g'(t) = x p(x) = e^{a t − e^t − log Γ(a)}.
// Newton steps that leave the bracket [lo, hi] of known signs become bisections; while the bracket is still open on
// one side, steps are at most 1 (towards the open side). Start: t with x^a/Γ(a+1) = u (the small-x form of P), capped at log of the mean a.
double gamma_log_quantile(double a, double u) {
  if (!(a > 0) || !std::isfinite(a) || !(u > 0 && u < 1)) return std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double lg = log_gamma(a);
  double t = std::min((std::log(u) + log_gamma(a + 1)) / a, std::log(a));
  double lo = -inf, hi = inf;
  for (int iter = 0; iter < 400; ++iter) {
    const PQ pq = gamma_pq(a, t);
    const double g = u <= 0.5 ? pq.p - u : (1 - u) - pq.q;  // through Q, the upper tail keeps its precision
    if (g == 0) return t;
    (g < 0 ? lo : hi) = t;
    const double slope = std::exp(a * t - std::exp(t) - lg);
    double next = slope > 0 ? t - g / slope : std::nan("");
    const bool open = std::isinf(lo) || std::isinf(hi);  // far out g is flat and Newton overshoots: walk instead
    if (!(next > lo && next < hi) || (open && std::abs(next - t) > 1))
      next = std::isinf(lo) ? t - 1 : std::isinf(hi) ? t + 1 : 0.5 * (lo + hi);
    if (std::abs(next - t) <= 1e-15 * std::max(1.0, std::abs(t)) || next == lo || next == hi) return next;
    t = next;
  }
  return t;
}

}  // namespace lava
