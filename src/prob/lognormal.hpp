#pragma once
// Log-normal distributions: log S ~ N(μ, σ²). The second BAM posterior [method.md §2.3]: q = LogNormal(μ_q, σ_q²) with
// μ_q = φ − σ_q²/2 so that E_q[S] = exp(φ), prior LogNormal(μ_p, σ_p²), attention = S/ΣS = softmax(μ_q + σ_q ε).
// A log-normal is the image of a Gaussian under exp, so both ops are the Gaussian ones read through that map:
// sampling composes exp, and the KL is unchanged by a bijection of the sample space. An attention variant that
// normalises with a softmax should take log S = gaussian_sample(μ, σ) directly and skip the exp.
#include "autodiff/tape.hpp"
#include "core/rng.hpp"

namespace lava {

// S = exp(μ + σ·ε), ε = rng.normal(i) for output element i (the same ε as gaussian_sample with the same rng);
// ∂S/∂μ = S, ∂S/∂σ = S·ε. E[S] = exp(μ + σ²/2), Var[S] = (exp(σ²) − 1)·exp(2μ + σ²).
template <class T> Var<T> lognormal_sample(Var<T> mu, Var<T> sigma, const CounterRng& rng);

// KL(LogNormal(μ_q, σ_q²) ‖ LogNormal(μ_p, σ_p²)) = log(σ_p/σ_q) + (σ_q² + (μ_q − μ_p)²)/(2σ_p²) − 1/2, elementwise.
template <class T> Var<T> kl_lognormal(Var<T> mu_q, Var<T> sigma_q, Var<T> mu_p, Var<T> sigma_p);

}  // namespace lava
