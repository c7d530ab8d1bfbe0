#pragma once
// Gamma(α, 1) samples with reparameterised gradients, and the Gamma quantile as a differentiable op.
//
// Sampling: Marsaglia & Tsang (2000), with the boost z = z'·u^{1/α}, z' ~ Gamma(α+1), for α < 1. Element i draws its
// noise from counters i·64 + j of `rng` (j = 0: the boost uniform; j = 1+2t, 2+2t: the normal and the uniform of
// attempt t < 31), so a sample is a pure function of (seed, stream, i) and of α[i], whatever the thread count.
// Two calls with the same rng reuse the same noise: give each draw its own stream (rng.child(step), stream_id(...)).
//
// Gradient: implicit differentiation of the CDF (Jankowiak & Obermeyer 2018, which the paper cites for its Dirichlet
// attention; Figurnov et al. 2018), as torch's Dirichlet.rsample does. With the sample's CDF value u = P(α, z) fixed,
//   dz/dα = −(∂P/∂α)(z; α) / p(z; α)       (prob/incomplete_gamma.hpp computes d log z/dα)
// We prefer it to shape augmentation (Naesseth et al. 2017: differentiate z = (α+B−1/3)(1+cε)³·Π_{i<B} u_i^{1/(α+i)} on
// fixed accepted noise): that derivative ignores how the acceptance region moves with α, so it is biased unless B is
// large or a high-variance score-function correction is added. The implicit gradient is exact for every sample, for
// any α > 0 (including the tiny α = e^{-10} of masked positions, whose z may underflow to 0 while log z and
// d log z/dα stay finite), and costs one series or continued fraction of O(1 + √α) terms per element in backward.
// Because the forward map on fixed Marsaglia–Tsang noise is not the one differentiated, finite differences of
// gamma_log_sample on fixed noise do not equal its gradient sample by sample, only in expectation; gamma_quantile
// shares the gradient kernel and is the op the finite-difference gradient check sees.
//
// α must be > 0 and finite; other values give NaN samples and gradients (a diverged model shows up as a NaN loss).
// Rates: a Gamma(α, β) sample is gamma_sample(α)/β.
#include "autodiff/tape.hpp"
#include "core/rng.hpp"

namespace lava {

// log z, z ~ Gamma(α, 1) independently per element; same shape as alpha. In log space so that Dirichlet samples
// can be normalised with a softmax even when every z underflows.
template <class T> Var<T> gamma_log_sample(Var<T> alpha, const CounterRng& rng);

// z ~ Gamma(α, 1): exp(gamma_log_sample(α)).
template <class T> Var<T> gamma_sample(Var<T> alpha, const CounterRng& rng);

// z = P^{-1}(α, u), the Gamma(α, 1) quantile, 0 < u < 1; α and u broadcast like binary ops (prob/broadcast.hpp).
// dz/dα by the implicit rule above, dz/du = 1/p(z; α). An inverse-CDF sampler when u is uniform noise (slower than
// Marsaglia–Tsang: a Newton solve per element).
template <class T> Var<T> gamma_quantile(Var<T> alpha, Var<T> u);

// One draw of log z, z ~ Gamma(α, 1), from counters i·64 + j of rng (the kernel of gamma_log_sample).
double gamma_log_draw(double alpha, const CounterRng& rng, uint64_t i);

}  // namespace lava
