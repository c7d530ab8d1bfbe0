#pragma once
// Fused additive (MLP) attention scorer (Bahdanau et al. 2015), every query against every source position:
//   s[b, t, i] = Σ_a v[a] · u[b, t, i, a],   u = tanh(q[b, t, a] + k[b, i, a])
// u is kept for the backward pass; with g = ds[b, t, i] and δ[a] = g · v[a] · (1 − u[a]²):
//   dq[b, t, :] += Σ_i δ      dk[b, i, :] += Σ_t δ      dv[a] += Σ_{b, t, i} g · u[b, t, i, a]
// Why fused: the unfused graph pair_add → tanh → matmul(·, v) stores the (B, T, S, A) sum and its tanh and makes
// six passes over them (three forward, three backward), each its own parallel region, once per decoder step.
// Here the sum is never stored and there is one pass each way.
// Buffers: q, dq (B, T, A); k, dk (B, S, A); v, dv (A); s, ds (B, T, S); u (B, T, S, A);
//          dv_part (B, A) scratch: dv's partial sum over one b, added into dv in b order.
// Work is split over b only (dq, dk and dv_part of one b are written by one thread), and every sum runs in a fixed
// order, so no result depends on the thread count.
#include <cstdint>

#include "core/parallel.hpp"
#include "core/vec_math.hpp"

namespace lava::kernels {

template <class T>
void mlp_attention_scores_forward(T* s, T* u, const T* q, const T* k, const T* v, int64_t B, int64_t Tn, int64_t S,
                                  int64_t A) {
#pragma omp parallel for schedule(static) if (B * Tn * S * A >= kParallelMin)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < Tn; ++t) {
      const T* qr = q + (b * Tn + t) * A;
      for (int64_t i = 0; i < S; ++i) {
        const T* kr = k + (b * S + i) * A;
        T* ur = u + ((b * Tn + t) * S + i) * A;
        for (int64_t a = 0; a < A; ++a) ur[a] = qr[a] + kr[a];
        vmath::tanh_array(ur, ur, A);
        s[(b * Tn + t) * S + i] = vmath::dot_fixed_order(ur, v, A);
      }
    }
}

// dq, dk or dv may be null (that input needs no gradient); dv needs dv_part.
template <class T>
void mlp_attention_scores_backward(T* dq, T* dk, T* dv, T* dv_part, const T* ds, const T* u, const T* v, int64_t B,
                                   int64_t Tn, int64_t S, int64_t A) {
#pragma omp parallel for schedule(static) if (B * Tn * S * A >= kParallelMin)
  for (int64_t b = 0; b < B; ++b) {
    T* dvb = dv ? dv_part + b * A : nullptr;
    if (dvb)
      for (int64_t a = 0; a < A; ++a) dvb[a] = T(0);
    for (int64_t t = 0; t < Tn; ++t) {
      T* dqr = dq ? dq + (b * Tn + t) * A : nullptr;
      for (int64_t i = 0; i < S; ++i) {
        const T g = ds[(b * Tn + t) * S + i];
        const T* ur = u + ((b * Tn + t) * S + i) * A;
        T* dkr = dk ? dk + (b * S + i) * A : nullptr;
        if (dvb)
          for (int64_t a = 0; a < A; ++a) dvb[a] += g * ur[a];
        if (!dqr && !dkr) continue;
        for (int64_t a = 0; a < A; ++a) {
          const T delta = g * v[a] * (T(1) - ur[a] * ur[a]);
          if (dqr) dqr[a] += delta;
          if (dkr) dkr[a] += delta;
        }
      }
    }
  }
  if (dv)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t a = 0; a < A; ++a) dv[a] += dv_part[b * A + a];
}

}  // namespace lava::kernels
