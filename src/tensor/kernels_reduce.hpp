#pragma once
// Reductions over one axis of an (outer, n, inner) view, and over a whole buffer.
// Each output is summed by one thread in index order, and the whole-buffer sum adds fixed 4096-element chunks in
// chunk order, so results do not depend on the thread count.
#include <cstdint>
#include <algorithm>

#include "core/parallel.hpp"

namespace lava::kernels {

// dst[j] += Σ_r term(r, j) for j < cols, r in increasing order for every j (term(r, j) reads element (r, j) of a
// row-major (rows, cols) matrix). A block of columns at a time, its rows read contiguously and its sums in a local
// array that vectorises: a column at a time would stride by a whole row at every element.   dst: (cols)
template <class T, class Term>
void add_column_sums_of(T* dst, int64_t rows, int64_t cols, Term term) {
  constexpr int64_t kBlock = 256;
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMin && cols > kBlock)
  for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
    const int64_t n = std::min(kBlock, cols - j0);
    T acc[kBlock] = {};
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) acc[j] += term(r, j0 + j);
    for (int64_t j = 0; j < n; ++j) dst[j0 + j] += acc[j];
  }
}

// y[o, r] = scale · Σ_i x[o, i, r]     x: (outer, n, inner), y: (outer, inner)
template <class T>
void sum_axis_forward(T* y, const T* x, int64_t outer, int64_t n, int64_t inner, T scale) {
#pragma omp parallel for schedule(static) if (outer * n * inner >= kParallelMin)
  for (int64_t o = 0; o < outer; ++o) {
    T* yo = y + o * inner;
    const T* xo = x + o * n * inner;
    for (int64_t r = 0; r < inner; ++r) yo[r] = T(0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t r = 0; r < inner; ++r) yo[r] += xo[i * inner + r];
    for (int64_t r = 0; r < inner; ++r) yo[r] *= scale;
  }
}
// dx[o, i, r] += scale · dy[o, r]
template <class T>
void sum_axis_backward(T* dx, const T* dy, int64_t outer, int64_t n, int64_t inner, T scale) {
#pragma omp parallel for schedule(static) if (outer * n * inner >= kParallelMin)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t r = 0; r < inner; ++r) dx[(o * n + i) * inner + r] += scale * dy[o * inner + r];
}

// Σ_i f(x[i]) in fixed chunks: partial sums per chunk (in parallel), then the partials in chunk order.
// The chunk size depends only on n (at least 4096, at most 1024 chunks, so the partials live on the stack).
// Within a chunk, 16 running sums (element i into sum i mod 16, added in order at the end) let the compiler use
// vector adds: one running sum is a chain of dependent adds, 4 cycles each, whatever the memory can deliver.
template <class T, class F>
T sum_map_fixed_order(const T* x, int64_t n, F f) {
  constexpr int64_t kMaxChunks = 1024;
  const int64_t chunk = std::max<int64_t>(4096, (n + kMaxChunks - 1) / kMaxChunks);
  const int64_t chunks = (n + chunk - 1) / chunk;
  T partial[kMaxChunks];
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t c = 0; c < chunks; ++c) {
    constexpr int64_t kSums = 16;
    T sums[kSums] = {};
    const int64_t end = std::min(n, c * chunk + chunk);
    int64_t i = c * chunk;
    for (; i + kSums <= end; i += kSums)
      for (int64_t l = 0; l < kSums; ++l) sums[l] += f(x[i + l]);
    T acc = T(0);
    for (int64_t l = 0; l < kSums; ++l) acc += sums[l];
    for (; i < end; ++i) acc += f(x[i]);
    partial[c] = acc;
  }
  T total = T(0);
  for (int64_t c = 0; c < chunks; ++c) total += partial[c];
  return total;
}

template <class T>
T sum_all_fixed_order(const T* x, int64_t n) {
  return sum_map_fixed_order(x, n, [](T v) { return v; });
}

}  // namespace lava::kernels
