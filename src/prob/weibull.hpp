#pragma once
// Weibull(k, λ) samples by inversion and the closed-form KL(Weibull ‖ Gamma) of Bayesian Attention Modules
// [method.md §2.3]: unnormalised attention weights S ~ Weibull(k, λ) with a Gamma(α, β) prior (β a rate).
// Parameters broadcast like binary ops (prob/broadcast.hpp): a scalar k or β of shape () spreads over (B, T, S).
#include "autodiff/tape.hpp"
#include "core/rng.hpp"

namespace lava {

// S = λ·(−log(1 − u))^{1/k}, u = rng.uniform(i) for output element i: reparameterised, so
// ∂S/∂λ = S/λ and ∂S/∂k = −S·log(−log(1 − u))/k². E[S] = λΓ(1 + 1/k). k, λ > 0.
template <class T> Var<T> weibull_sample(Var<T> k, Var<T> lambda, const CounterRng& rng);

// KL(Weibull(k, λ) ‖ Gamma(α, β)) elementwise (the BAM code's formula; γ = Euler–Mascheroni):
//   −α log λ + γα/k + log k + βλΓ(1 + 1/k) − γ − 1 − α log β + log Γ(α)
template <class T> Var<T> kl_weibull_gamma(Var<T> k, Var<T> lambda, Var<T> alpha, Var<T> beta);

}  // namespace lava
