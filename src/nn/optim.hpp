#pragma once
// Optimizers over a whole ParamStore, and gradient clipping by global norm.
//   SGD with momentum:  u ← μu + g;  θ ← θ − η u
//   Adam (Kingma & Ba): m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²;  θ ← θ − η m̂ / (√v̂ + ε),
//                       m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t)
// Updates are elementwise (any thread split gives the same bits); the global norm is a fixed-order sum.
#include <cmath>
#include <vector>

#include "nn/params.hpp"
#include "tensor/kernels_reduce.hpp"
#include "tensor/parallel.hpp"

namespace lava {

// Scales all gradients so that their global L2 norm is at most max_norm; returns the norm before clipping.
template <class T>
T clip_grad_norm(ParamStore<T>& ps, T max_norm) {
  const int64_t n = int64_t(ps.size());
  T* g = ps.grads();
  const T norm = std::sqrt(kernels::sum_map_fixed_order(g, n, [](T x) { return x * x; }));
  if (max_norm > T(0) && norm > max_norm) {
    const T scale = max_norm / norm;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) g[i] *= scale;
  }
  return norm;
}

template <class T>
struct Adam {
  T lr = T(3e-4), beta1 = T(0.9), beta2 = T(0.999), eps = T(1e-8);
  std::vector<T> m, v;
  int64_t t = 0;

  void step(ParamStore<T>& ps) {
    const int64_t n = int64_t(ps.size());
    if (m.size() != size_t(n)) m.assign(size_t(n), T(0)), v.assign(size_t(n), T(0));
    ++t;
    const T c1 = T(1) - T(std::pow(double(beta1), double(t))), c2 = T(1) - T(std::pow(double(beta2), double(t)));
    T* w = ps.values();
    const T* g = ps.grads();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      m[size_t(i)] = beta1 * m[size_t(i)] + (T(1) - beta1) * g[i];
      v[size_t(i)] = beta2 * v[size_t(i)] + (T(1) - beta2) * g[i] * g[i];
      w[i] -= lr * (m[size_t(i)] / c1) / (std::sqrt(v[size_t(i)] / c2) + eps);
    }
  }
};

template <class T>
struct SgdMomentum {
  T lr = T(0.1), momentum = T(0.9);
  std::vector<T> u;

  void step(ParamStore<T>& ps) {
    const int64_t n = int64_t(ps.size());
    if (u.size() != size_t(n)) u.assign(size_t(n), T(0));
    T* w = ps.values();
    const T* g = ps.grads();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      u[size_t(i)] = momentum * u[size_t(i)] + g[i];
      w[i] -= lr * u[size_t(i)];
    }
  }
};

}  // namespace lava
