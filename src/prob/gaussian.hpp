#pragma once
// Diagonal Gaussians N(μ, σ²): reparameterised samples and the closed-form KL, both elementwise (sum over the axes
// you need afterwards). Parameterised by the standard deviation σ > 0; a network that predicts log σ composes exp.
// Parameters broadcast like binary ops (prob/broadcast.hpp): a fixed σ of shape () spreads over every element.
// Used by the Gaussian-context baseline [method.md §2.3] and, in log space, by the log-normal BAM variant.
#include "autodiff/tape.hpp"
#include "core/rng.hpp"

namespace lava {

// z = μ + σ·ε, ε = rng.normal(i) for output element i;  ∂z/∂μ = 1, ∂z/∂σ = ε.
template <class T> Var<T> gaussian_sample(Var<T> mu, Var<T> sigma, const CounterRng& rng);

// KL(N(μ_q, σ_q²) ‖ N(μ_p, σ_p²)) = log(σ_p/σ_q) + (σ_q² + (μ_q − μ_p)²)/(2σ_p²) − 1/2, elementwise.
template <class T> Var<T> kl_gaussian(Var<T> mu_q, Var<T> sigma_q, Var<T> mu_p, Var<T> sigma_p);

}  // namespace lava
