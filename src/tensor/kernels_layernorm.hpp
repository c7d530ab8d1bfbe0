#pragma once
// Layer normalisation over the last axis (Ba, Kiros & Hinton 2016), the llm.c layernorm_forward/backward pair.
//   forward:  μ_r = (1/H) Σ_j x_rj,  σ²_r = (1/H) Σ_j (x_rj − μ_r)²,  rstd_r = 1/√(σ²_r + ε)
//             x̂_rj = (x_rj − μ_r)·rstd_r,  y_rj = γ_j x̂_rj + β_j
//   backward: with g_rj = dy_rj γ_j (the gradient reaching x̂),
//             dx_rj += rstd_r (g_rj − mean_j g_rj − x̂_rj · mean_j (g_rj x̂_rj))
//             dγ_j += Σ_r dy_rj x̂_rj,  dβ_j += Σ_r dy_rj
// Buffers: x, y, dx, dy (R, H); γ, β, dγ, dβ (H); mean, rstd (R), cached by forward for backward.
// The x gradient is split over rows and the γ/β gradients over columns, so every output is summed by one thread in
// index order: no atomics, and the same bits with any thread count.
#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"

namespace lava::kernels {

template <class T>
void layer_norm_forward(T* y, T* mean, T* rstd, const T* x, const T* gamma, const T* beta, int64_t R, int64_t H,
                        T eps) {
#pragma omp parallel for schedule(static) if (R * H >= kParallelMin)
  for (int64_t r = 0; r < R; ++r) {
    const T* xr = x + r * H;
    // pass 1: the mean; pass 2: the variance around it (two passes: no cancellation of E[x²] − E[x]²)
    T m = T(0);
    for (int64_t j = 0; j < H; ++j) m += xr[j];
    m /= T(H);
    T v = T(0);
    for (int64_t j = 0; j < H; ++j) v += (xr[j] - m) * (xr[j] - m);
    v /= T(H);
    const T s = T(1) / std::sqrt(v + eps);
    T* yr = y + r * H;
    for (int64_t j = 0; j < H; ++j) yr[j] = gamma[j] * ((xr[j] - m) * s) + beta[j];
    mean[r] = m;
    rstd[r] = s;
  }
}

// dx, dgamma, dbeta may each be nullptr (no gradient wanted).
template <class T>
void layer_norm_backward(T* dx, T* dgamma, T* dbeta, const T* dy, const T* x, const T* gamma, const T* mean,
                         const T* rstd, int64_t R, int64_t H) {
  if (dx) {
#pragma omp parallel for schedule(static) if (R * H >= kParallelMin)
    for (int64_t r = 0; r < R; ++r) {
      const T* xr = x + r * H;
      const T* dyr = dy + r * H;
      const T m = mean[r], s = rstd[r];
      // the two row means of the formula: mean_j g_rj and mean_j g_rj x̂_rj
      T g_mean = T(0), gx_mean = T(0);
      for (int64_t j = 0; j < H; ++j) {
        const T g = dyr[j] * gamma[j];
        g_mean += g;
        gx_mean += g * ((xr[j] - m) * s);
      }
      g_mean /= T(H);
      gx_mean /= T(H);
      T* dxr = dx + r * H;
      for (int64_t j = 0; j < H; ++j) {
        const T xhat = (xr[j] - m) * s;
        dxr[j] += s * (dyr[j] * gamma[j] - g_mean - xhat * gx_mean);
      }
    }
  }
  if (dgamma || dbeta) {
#pragma omp parallel for schedule(static) if (R * H >= kParallelMin && H >= 64)
    for (int64_t j = 0; j < H; ++j) {
      T dg = T(0), db = T(0);
      for (int64_t r = 0; r < R; ++r) {
        const T d = dy[r * H + j];
        dg += d * ((x[r * H + j] - mean[r]) * rstd[r]);
        db += d;
      }
      if (dgamma) dgamma[j] += dg;
      if (dbeta) dbeta[j] += db;
    }
  }
}

}  // namespace lava::kernels
