// Weibull samples by inversion of the CDF 1 − exp(−(S/λ)^k), and KL(Weibull ‖ Gamma).
#include "prob/weibull.hpp"

#include <cmath>

#include "prob/broadcast.hpp"
#include "core/parallel.hpp"
#include "tensor/special_math.hpp"
#include "core/op_profile.hpp"

namespace lava {

namespace {
constexpr double kEulerGamma = 0.57721566490153286061;
}  // namespace

// S[i] = λ·E^{1/k}, E = −log(1 − u_i) = −log1p(−u_i) (exact for tiny u);
// dλ += dS·S/λ,  dk += −dS·S·log(E)/k².
// Buffers: S, dS, log_e (n, log E cached for backward); k, λ and their gradients broadcast to n.
template <class T>
Var<T> weibull_sample(Var<T> k, Var<T> lambda, const CounterRng& rng) {
  LAVA_PROFILE_OP("weibull_sample");
  Operands<T, 2> in({k, lambda});
  const int64_t n = in.n;
  Var<T> s = k.tape->make_output(in.shape, k, lambda);
  T* log_e = s.needs_grad() ? k.tape->template scratch<T>(n) : nullptr;
  T* sv = s.val();
#pragma omp parallel for schedule(static) if (n >= kParallelMin / 8)
  for (int64_t i = 0; i < n; ++i) {
    const double le = std::log(-std::log1p(-rng.uniform(uint64_t(i))));
    if (log_e) log_e[i] = T(le);
    sv[i] = T(double(in.at(1, i)) * std::exp(le / double(in.at(0, i))));
  }
  if (s.needs_grad()) {
    in.prepare_backward(*k.tape);
    k.tape->on_backward([in, s, log_e, n] {
      const T* sv = s.val();
      const T* ds = s.grad();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
      for (int64_t i = 0; i < n; ++i) {
        const T kk = in.at(0, i), lam = in.at(1, i);
        in.add_grad(0, i, -ds[i] * sv[i] * log_e[i] / (kk * kk));
        in.add_grad(1, i, ds[i] * sv[i] / lam);
      }
      in.finish();
    });
  }
  return s;
}

// kl = −α log λ + γα/k + log k + βλG − γ − 1 − α log β + log Γ(α),   G = Γ(1 + 1/k)
// ∂/∂k = −γα/k² + 1/k − βλG ψ(1 + 1/k)/k²,   ∂/∂λ = −α/λ + βG,
// ∂/∂α = −log λ + γ/k − log β + ψ(α),          ∂/∂β = −α/β + λG.
// Buffers: kl, dkl (n); k, λ, α, β and their gradients broadcast to n.
template <class T>
Var<T> kl_weibull_gamma(Var<T> k, Var<T> lambda, Var<T> alpha, Var<T> beta) {
  LAVA_PROFILE_OP("kl_weibull_gamma");
  Operands<T, 4> in({k, lambda, alpha, beta});
  const int64_t n = in.n;
  Var<T> kl = k.tape->make_output(in.shape, k, lambda, alpha, beta);
  T* out = kl.val();
#pragma omp parallel for schedule(static) if (n >= kParallelMin / 8)
  for (int64_t i = 0; i < n; ++i) {
    const double kk = double(in.at(0, i)), lam = double(in.at(1, i)), a = double(in.at(2, i)),
                 b = double(in.at(3, i));
    const double G = std::exp(log_gamma(1 + 1 / kk));
    out[i] = T(-a * std::log(lam) + kEulerGamma * a / kk + std::log(kk) + b * lam * G - kEulerGamma - 1 -
               a * std::log(b) + log_gamma(a));
  }
  if (kl.needs_grad()) {
    in.prepare_backward(*k.tape);
    k.tape->on_backward([in, kl, n] {
      const T* dkl = kl.grad();
#pragma omp parallel for schedule(static) if (n >= kParallelMin / 8)
      for (int64_t i = 0; i < n; ++i) {
        const double kk = double(in.at(0, i)), lam = double(in.at(1, i)), a = double(in.at(2, i)),
                     b = double(in.at(3, i)), g = double(dkl[i]);
        const double G = std::exp(log_gamma(1 + 1 / kk));
        if (in.grad[0])
          in.add_grad(0, i, T(g * (1 / kk - (kEulerGamma * a + b * lam * G * digamma_fn(1 + 1 / kk)) / (kk * kk))));
        in.add_grad(1, i, T(g * (-a / lam + b * G)));
        if (in.grad[2]) in.add_grad(2, i, T(g * (-std::log(lam) + kEulerGamma / kk - std::log(b) + digamma_fn(a))));
        in.add_grad(3, i, T(g * (-a / b + lam * G)));
      }
      in.finish();
    });
  }
  return kl;
}

#define LAVA_INSTANTIATE(T)                                                  \
  template Var<T> weibull_sample(Var<T>, Var<T>, const CounterRng&);         \
  template Var<T> kl_weibull_gamma(Var<T>, Var<T>, Var<T>, Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
