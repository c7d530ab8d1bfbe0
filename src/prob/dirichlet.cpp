// Dirichlet samples (normalised gammas) and the Dirichlet–Dirichlet KL divergence.
#include "prob/dirichlet.hpp"

#include "autodiff/ops.hpp"
#include "prob/gamma.hpp"
#include "core/parallel.hpp"
#include "tensor/special_math.hpp"
#include "core/op_profile.hpp"

namespace lava {

template <class T>
Var<T> dirichlet_sample(Var<T> alpha, const CounterRng& rng) {
  LAVA_PROFILE_OP("dirichlet_sample");
  return softmax(gamma_log_sample(alpha, rng), -1);
}

// kl[r] = log Γ(a₀) − Σ log Γ(a_k) − log Γ(b₀) + Σ log Γ(b_k) + Σ (a_k − b_k)(ψ(a_k) − ψ(a₀))
// ∂kl/∂a_k = (a_k − b_k) ψ'(a_k) − (a₀ − b₀) ψ'(a₀)          (the ψ terms cancel)
// ∂kl/∂b_k = ψ(b_k) − ψ(b₀) − ψ(a_k) + ψ(a₀)
// Buffers: a, b, da, db (rows, K); kl, dkl (rows).
template <class T>
Var<T> kl_dirichlet(Var<T> a, Var<T> b) {
  LAVA_PROFILE_OP("kl_dirichlet");
  const Shape s = a.shape();
  LAVA_CHECK(s == b.shape(), "kl_dirichlet: shapes {} and {} differ", s.str(), b.shape().str());
  LAVA_CHECK(s.rank >= 1, "kl_dirichlet: needs a last axis of categories");
  const int64_t K = s.last(), rows = K ? s.numel() / K : 0;
  Var<T> kl = a.tape->make_output(s.without(-1), a, b);
  const T* av = a.val();
  const T* bv = b.val();
  T* out = kl.val();
#pragma omp parallel for schedule(static) if (rows * K >= kParallelMin / 16)
  for (int64_t r = 0; r < rows; ++r) {
    const T* ar = av + r * K;
    const T* br = bv + r * K;
    double a0 = 0, b0 = 0, acc = 0;
    for (int64_t k = 0; k < K; ++k) a0 += double(ar[k]), b0 += double(br[k]);
    const double psi_a0 = digamma_fn(a0);
    for (int64_t k = 0; k < K; ++k) {
      const double ak = double(ar[k]), bk = double(br[k]);
      acc += log_gamma(bk) - log_gamma(ak) + (ak - bk) * (digamma_fn(ak) - psi_a0);
    }
    out[r] = T(acc + log_gamma(a0) - log_gamma(b0));
  }
  if (kl.needs_grad())
    a.tape->on_backward([a, b, kl, rows, K] {
      const T* av = a.val();
      const T* bv = b.val();
      const T* dkl = kl.grad();
      T* da = a.grad();
      T* db = b.grad();
#pragma omp parallel for schedule(static) if (rows * K >= kParallelMin / 16)
      for (int64_t r = 0; r < rows; ++r) {
        const T* ar = av + r * K;
        const T* br = bv + r * K;
        double a0 = 0, b0 = 0;
        for (int64_t k = 0; k < K; ++k) a0 += double(ar[k]), b0 += double(br[k]);
        const double g = double(dkl[r]), psi_a0 = digamma_fn(a0), psi_b0 = digamma_fn(b0);
        const double common_a = (a0 - b0) * trigamma_fn(a0);
        for (int64_t k = 0; k < K; ++k) {
          const double ak = double(ar[k]), bk = double(br[k]);
          if (da) da[r * K + k] += T(g * ((ak - bk) * trigamma_fn(ak) - common_a));
          if (db) db[r * K + k] += T(g * (digamma_fn(bk) - psi_b0 - digamma_fn(ak) + psi_a0));
        }
      }
    });
  return kl;
}

#define LAVA_INSTANTIATE(T)                                         \
  template Var<T> dirichlet_sample(Var<T>, const CounterRng&);      \
  template Var<T> kl_dirichlet(Var<T>, Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
