#pragma once
// Fused LSTM cell (PyTorch gate order i, f, g, o).
//   forward:  i=σ(a_i) f=σ(a_f) g=tanh(a_g) o=σ(a_o);  c = f⊙c_prev + i⊙g;  h = o⊙tanh(c)
//   backward: dc_tot = dc + dh⊙o⊙(1−tanh²c)
//             da_i = dc_tot⊙g⊙i(1−i)   da_f = dc_tot⊙c_prev⊙f(1−f)   da_g = dc_tot⊙i⊙(1−g²)
//             da_o = dh⊙tanh(c)⊙o(1−o)   dc_prev += dc_tot⊙f
// Buffers: gates, act, dgates (B, 4H) — act caches the activated gates for backward;
//          c_prev, c, h, tanh_c, dc_prev, dc, dh (B, H).
#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"
#include "core/vec_math.hpp"

namespace lava::kernels {

template <class T>
void lstm_cell_forward(T* h, T* c, T* act, T* tanh_c, const T* gates, const T* c_prev, int64_t B, int64_t H) {
#pragma omp parallel for schedule(static) if (B * H * 4 >= kParallelMin)
  for (int64_t b = 0; b < B; ++b) {
    const T* a = gates + b * 4 * H;
    T* s = act + b * 4 * H;  // [i | f | g | o]: σ over i and f together, tanh over g, σ over o
    vmath::sigmoid_array(s, a, 2 * H);
    vmath::tanh_array(s + 2 * H, a + 2 * H, H);
    vmath::sigmoid_array(s + 3 * H, a + 3 * H, H);
    T* cb = c + b * H;
    const T* cp = c_prev + b * H;
    for (int64_t j = 0; j < H; ++j) cb[j] = s[H + j] * cp[j] + s[j] * s[2 * H + j];
    vmath::tanh_array(tanh_c + b * H, cb, H);
    for (int64_t j = 0; j < H; ++j) h[b * H + j] = s[3 * H + j] * tanh_c[b * H + j];
  }
}

// dh or dc may be null (that output's gradient is zero); dgates and dc_prev may be null (input needs no gradient).
template <class T>
void lstm_cell_backward(T* dgates, T* dc_prev, const T* dh, const T* dc, const T* act, const T* tanh_c,
                        const T* c_prev, int64_t B, int64_t H) {
#pragma omp parallel for schedule(static) if (B * H * 4 >= kParallelMin)
  for (int64_t b = 0; b < B; ++b) {
    const T* s = act + b * 4 * H;
    for (int64_t j = 0; j < H; ++j) {
      const int64_t k = b * H + j;
      const T i = s[j], f = s[H + j], g = s[2 * H + j], o = s[3 * H + j], tc = tanh_c[k];
      const T dhk = dh ? dh[k] : T(0);
      const T dct = (dc ? dc[k] : T(0)) + dhk * o * (T(1) - tc * tc);
      if (dgates) {
        T* d = dgates + b * 4 * H;
        d[j] += dct * g * i * (T(1) - i);
        d[H + j] += dct * c_prev[k] * f * (T(1) - f);
        d[2 * H + j] += dct * i * (T(1) - g * g);
        d[3 * H + j] += dhk * tc * o * (T(1) - o);
      }
      if (dc_prev) dc_prev[k] += dct * f;
    }
  }
}

}  // namespace lava::kernels
