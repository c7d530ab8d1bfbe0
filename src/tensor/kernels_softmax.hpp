#pragma once
// Softmax-family kernels over one axis of an (outer, n, inner) view; one (o, r) lane per loop iteration, so each
// lane is reduced by one thread in index order. All subtract the lane maximum before exp (no overflow).
// Buffers: x, y, dx, dy are (outer, n, inner); for logsumexp y, dy are (outer, inner).
#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"

namespace lava::kernels {

// lse[o, r] = m + log Σ_i exp(x[o,i,r] − m), m = max_i x[o,i,r]
template <class T>
inline T lane_logsumexp(const T* x, int64_t n, int64_t stride) {
  T m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i * stride] > m ? x[i * stride] : m;
  if (std::isinf(m) && m < 0) return m;  // every entry −inf (fully masked): log Σ = −inf
  T s = T(0);
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i * stride] - m);
  return m + std::log(s);
}

// mode 0: y = softmax(x) = exp(x − lse);  mode 1: y = log_softmax(x) = x − lse
template <class T>
void softmax_forward(T* y, const T* x, int64_t outer, int64_t n, int64_t inner, bool log_space) {
#pragma omp parallel for schedule(static) if (outer * n * inner >= kParallelMin)
  for (int64_t lane = 0; lane < outer * inner; ++lane) {
    const int64_t base = (lane / inner) * n * inner + lane % inner;
    const T lse = lane_logsumexp(x + base, n, inner);
    for (int64_t i = 0; i < n; ++i) {
      T v = x[base + i * inner] - lse;
      y[base + i * inner] = log_space ? v : std::exp(v);
    }
  }
}

// softmax:      dx_i += y_i (dy_i − Σ_j dy_j y_j)
// log_softmax:  dx_i += dy_i − exp(y_i) Σ_j dy_j
template <class T>
void softmax_backward(T* dx, const T* y, const T* dy, int64_t outer, int64_t n, int64_t inner, bool log_space) {
#pragma omp parallel for schedule(static) if (outer * n * inner >= kParallelMin)
  for (int64_t lane = 0; lane < outer * inner; ++lane) {
    const int64_t base = (lane / inner) * n * inner + lane % inner;
    T dot = T(0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = base + i * inner;
      dot += log_space ? dy[k] : dy[k] * y[k];
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = base + i * inner;
      dx[k] += log_space ? dy[k] - std::exp(y[k]) * dot : y[k] * (dy[k] - dot);
    }
  }
}

// y[o, r] = logsumexp_i x[o, i, r]
template <class T>
void logsumexp_forward(T* y, const T* x, int64_t outer, int64_t n, int64_t inner) {
#pragma omp parallel for schedule(static) if (outer * n * inner >= kParallelMin)
  for (int64_t lane = 0; lane < outer * inner; ++lane) {
    const int64_t base = (lane / inner) * n * inner + lane % inner;
    y[lane] = lane_logsumexp(x + base, n, inner);
  }
}

// dx[o, i, r] += dy[o, r] · exp(x[o, i, r] − y[o, r])   (the softmax weights)
template <class T>
void logsumexp_backward(T* dx, const T* x, const T* y, const T* dy, int64_t outer, int64_t n, int64_t inner) {
#pragma omp parallel for schedule(static) if (outer * n * inner >= kParallelMin)
  for (int64_t lane = 0; lane < outer * inner; ++lane) {
    const int64_t base = (lane / inner) * n * inner + lane % inner;
    if (std::isinf(y[lane]) && y[lane] < 0) continue;  // fully masked lane: no gradient
    for (int64_t i = 0; i < n; ++i) dx[base + i * inner] += dy[lane] * std::exp(x[base + i * inner] - y[lane]);
  }
}

}  // namespace lava::kernels
