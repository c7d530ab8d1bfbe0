// Gaussian samples z = μ + σε and KL(N ‖ N), elementwise with broadcasting.
#include "prob/gaussian.hpp"

#include <cmath>

#include "prob/broadcast.hpp"
#include "core/parallel.hpp"
#include "core/op_profile.hpp"

namespace lava {

// z[i] = μ + σ·ε_i;  dμ += dz,  dσ += dz·ε_i.
// Buffers: z, dz, eps (n, ε cached for backward); μ, σ and their gradients broadcast to n.
template <class T>
Var<T> gaussian_sample(Var<T> mu, Var<T> sigma, const CounterRng& rng) {
  LAVA_PROFILE_OP("gaussian_sample");
  Operands<T, 2> in({mu, sigma});
  const int64_t n = in.n;
  Var<T> z = mu.tape->make_output(in.shape, mu, sigma);
  T* eps = z.needs_grad() ? mu.tape->template scratch<T>(n) : nullptr;
  T* zv = z.val();
#pragma omp parallel for schedule(static) if (n >= kParallelMin / 8)
  for (int64_t i = 0; i < n; ++i) {
    const T e = T(rng.normal(uint64_t(i)));
    if (eps) eps[i] = e;
    zv[i] = in.at(0, i) + in.at(1, i) * e;
  }
  if (z.needs_grad()) {
    in.prepare_backward(*mu.tape);
    mu.tape->on_backward([in, z, eps, n] {
      const T* dz = z.grad();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
      for (int64_t i = 0; i < n; ++i) {
        in.add_grad(0, i, dz[i]);
        in.add_grad(1, i, dz[i] * eps[i]);
      }
      in.finish();
    });
  }
  return z;
}

// kl = log σ_p − log σ_q + (σ_q² + Δ²)/(2σ_p²) − 1/2,  Δ = μ_q − μ_p
// ∂/∂μ_q = Δ/σ_p² = −∂/∂μ_p,   ∂/∂σ_q = −1/σ_q + σ_q/σ_p²,   ∂/∂σ_p = 1/σ_p − (σ_q² + Δ²)/σ_p³.
// Buffers: kl, dkl (n); μ_q, σ_q, μ_p, σ_p and their gradients broadcast to n.
template <class T>
Var<T> kl_gaussian(Var<T> mu_q, Var<T> sigma_q, Var<T> mu_p, Var<T> sigma_p) {
  LAVA_PROFILE_OP("kl_gaussian");
  Operands<T, 4> in({mu_q, sigma_q, mu_p, sigma_p});
  const int64_t n = in.n;
  Var<T> kl = mu_q.tape->make_output(in.shape, mu_q, sigma_q, mu_p, sigma_p);
  T* out = kl.val();
#pragma omp parallel for schedule(static) if (n >= kParallelMin / 4)
  for (int64_t i = 0; i < n; ++i) {
    const T d = in.at(0, i) - in.at(2, i), sq = in.at(1, i), sp = in.at(3, i);
    out[i] = std::log(sp / sq) + (sq * sq + d * d) / (T(2) * sp * sp) - T(0.5);
  }
  if (kl.needs_grad()) {
    in.prepare_backward(*mu_q.tape);
    mu_q.tape->on_backward([in, kl, n] {
      const T* dkl = kl.grad();
#pragma omp parallel for schedule(static) if (n >= kParallelMin / 4)
      for (int64_t i = 0; i < n; ++i) {
        const T d = in.at(0, i) - in.at(2, i), sq = in.at(1, i), sp = in.at(3, i), g = dkl[i];
        const T inv_p2 = T(1) / (sp * sp);
        in.add_grad(0, i, g * d * inv_p2);
        in.add_grad(1, i, g * (sq * inv_p2 - T(1) / sq));
        in.add_grad(2, i, -g * d * inv_p2);
        in.add_grad(3, i, g * (T(1) - (sq * sq + d * d) * inv_p2) / sp);
      }
      in.finish();
    });
  }
  return kl;
}

#define LAVA_INSTANTIATE(T)                                                 \
  template Var<T> gaussian_sample(Var<T>, Var<T>, const CounterRng&);       \
  template Var<T> kl_gaussian(Var<T>, Var<T>, Var<T>, Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
