#pragma once
// The regularised incomplete gamma function P(a, x) = γ(a, x)/Γ(a) = ∫_0^x t^{a−1} e^{−t} dt / Γ(a), the CDF of a
// Gamma(a, 1) variable, with its derivative in the shape a. This is what the implicit reparameterisation of Gamma
// samples needs (Figurnov et al. 2018; Jankowiak & Obermeyer 2018, the method the paper cites for its Dirichlet
// attention): holding u = P(a, x) fixed, dx/da = −(∂P/∂a)/(∂P/∂x).
//
// Both are computed by the classical pair of expansions (Numerical Recipes §6.2, Cephes igam/igamc), each
// differentiated term by term in a (TensorFlow's igamma does the same):
//   x < a + 1:  P = e^{a log x − x − log Γ(a+1)} · Σ_{n≥0} x^n / ((a+1)(a+2)…(a+n))  (power series)
//   x ≥ a + 1:  Q = 1 − P = e^{a log x − x − log Γ(a)} · CF(a, x)                (Legendre continued fraction)
// Each converges in O(1 + √a) terms near the mode x ≈ a and faster elsewhere; both reach double precision.
// Inputs are in log x so that samples which underflow (x = 0 when a is tiny) keep a finite, exact derivative.
namespace lava {

// P(a, x) for a > 0, given log x (x = 0 is log x = −∞).
double gamma_p(double a, double log_x);

// d log x / da at fixed P(a, x): the implicit reparameterisation gradient of a Gamma(a, 1) sample x, given log x.
// Equal to −(∂P/∂a) / (x · p(x; a)) with p the Gamma(a, 1) density; the exponential prefactors cancel, so it is
// computed without them (no overflow or underflow for any finite log x).
double gamma_dlogx_da(double a, double log_x);

// log x with P(a, x) = u, 0 < u < 1: the log of the Gamma(a, 1) quantile. Newton on log x with a bisection
// safeguard, to full double precision (used by gamma_quantile and by the tests of the implicit gradient).
double gamma_log_quantile(double a, double u);

}  // namespace lava
