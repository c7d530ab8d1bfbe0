#pragma once
// Dirichlet distributions over the last axis: reparameterised samples and the closed-form KL divergence.
// The relaxed attention of the paper [method.md §2.3]: q = Dir(α_q), prior Dir(α_p), z ~ q by rsample, KL analytic.
#include "autodiff/tape.hpp"
#include "core/rng.hpp"

namespace lava {

// x ~ Dir(α) per row of alpha (..., K): x = softmax(log z) over the last axis with z_k ~ Gamma(α_k, 1), the gammas
// from gamma_log_sample (implicit reparameterisation; element i of alpha uses counters i·64 + j of rng). Normalising
// in log space keeps rows whose gammas all underflow (tiny α) finite.
template <class T> Var<T> dirichlet_sample(Var<T> alpha, const CounterRng& rng);

// KL(Dir(a) ‖ Dir(b)) per row of a, b (..., K) (same shape) -> (...):
//   log Γ(a₀) − Σ_k log Γ(a_k) − log Γ(b₀) + Σ_k log Γ(b_k) + Σ_k (a_k − b_k)(ψ(a_k) − ψ(a₀)),  a₀ = Σ_k a_k.
template <class T> Var<T> kl_dirichlet(Var<T> a, Var<T> b);

}  // namespace lava
