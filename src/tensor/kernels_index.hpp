#pragma once
// Gather / scatter kernels.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/parallel.hpp"

namespace lava::kernels {

// y[r, :] = table[ids[r], :]      table: (V, E), ids: (rows), y: (rows, E)
template <class T>
void embedding_forward(T* y, const T* table, const int32_t* ids, int64_t rows, int64_t E) {
#pragma omp parallel for schedule(static) if (rows * E >= kParallelMin)
  for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * E, table + int64_t(ids[r]) * E, sizeof(T) * size_t(E));
}
// dtable[ids[r], :] += dy[r, :]   rows in order (repeated ids accumulate deterministically); columns split by thread
template <class T>
void embedding_backward(T* dtable, const T* dy, const int32_t* ids, int64_t rows, int64_t E) {
#pragma omp parallel for schedule(static) if (rows * E >= kParallelMin && E >= 64)
  for (int64_t e0 = 0; e0 < E; e0 += 16) {
    const int64_t e1 = e0 + 16 < E ? e0 + 16 : E;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t e = e0; e < e1; ++e) dtable[int64_t(ids[r]) * E + e] += dy[r * E + e];
  }
}

// y[r] = x[r, idx[r]]     x: (rows, C), idx: (rows), y: (rows);   dx[r, idx[r]] += dy[r]
template <class T>
void pick_forward(T* y, const T* x, const int32_t* idx, int64_t rows, int64_t C) {
  for (int64_t r = 0; r < rows; ++r) y[r] = x[r * C + idx[r]];
}
template <class T>
void pick_backward(T* dx, const T* dy, const int32_t* idx, int64_t rows, int64_t C) {
  for (int64_t r = 0; r < rows; ++r) dx[r * C + idx[r]] += dy[r];
}

// y[i] = mask[i mod nm] ? value : x[i];  dx[i] += mask[i mod nm] ? 0 : dy[i]     x, y: (n), mask: (nm), nm | n
template <class T>
void masked_fill_forward(T* y, const T* x, const uint8_t* mask, int64_t nm, int64_t n, T value) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) y[i] = mask[i % nm] ? value : x[i];
}
template <class T>
void masked_fill_backward(T* dx, const T* dy, const uint8_t* mask, int64_t nm, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i)
    if (!mask[i % nm]) dx[i] += dy[i];
}

// Copy a block of an (outer, n_src, inner) view into an (outer, n_dst, inner) view at axis offsets:
//   dst[o, dst_off + i, r] (+)= src[o, src_off + i, r] for i < len.   Slice and concat forward/backward are all this.
template <class T, bool accumulate>
void copy_axis_block(T* dst, int64_t n_dst, int64_t dst_off, const T* src, int64_t n_src, int64_t src_off,
                     int64_t outer, int64_t len, int64_t inner) {
#pragma omp parallel for schedule(static) if (outer * len * inner >= kParallelMin)
  for (int64_t o = 0; o < outer; ++o) {
    T* d = dst + (o * n_dst + dst_off) * inner;
    const T* s = src + (o * n_src + src_off) * inner;
    for (int64_t k = 0; k < len * inner; ++k) {
      if constexpr (accumulate) d[k] += s[k];
      else d[k] = s[k];
    }
  }
}

// y[b, j, i] = x[b, i, j]      x: (batch, rows, cols), y: (batch, cols, rows); backward is the same map, accumulated
// In 32×32 tiles (a tile's 32 source rows and 32 destination rows stay in L1), split over (b, tile row).
template <class T, bool accumulate>
void transpose_last2(T* y, const T* x, int64_t batch, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
#pragma omp parallel for schedule(static) if (batch * rows * cols >= kParallelMin)
  for (int64_t bt = 0; bt < batch * row_tiles; ++bt) {
    const int64_t b = bt / row_tiles, i0 = bt % row_tiles * kTile, i1 = std::min(rows, i0 + kTile);
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t j1 = std::min(cols, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i) {
          const T v = x[(b * rows + i) * cols + j];
          T& out = y[(b * cols + j) * rows + i];
          if constexpr (accumulate) out += v;
          else out = v;
        }
    }
  }
}

}  // namespace lava::kernels
