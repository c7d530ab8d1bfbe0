#pragma once
// Elementwise binary kernels with suffix broadcasting.
//   y[i] = f(a[ia], b[ib]) for i < n, where an operand of full size n is indexed by i and a broadcast operand of size
//   `inner` (a divisor of n, its shape the trailing dimensions of y) by i mod inner.
//   da[ia] += Σ dy[i] · ∂f/∂a, db[ib] += Σ dy[i] · ∂f/∂b; a broadcast operand sums over the rows in row order.
// Buffers: y, dy (n); a, da (na); b, db (nb); na, nb ∈ {n, inner}.
#include <algorithm>
#include <cstdint>

#include "tensor/kernels_reduce.hpp"
#include "core/parallel.hpp"

namespace lava::kernels {

struct AddFn {
  template <class T> static T f(T a, T b) { return a + b; }
  template <class T> static T da(T, T) { return T(1); }
  template <class T> static T db(T, T) { return T(1); }
};
struct SubFn {
  template <class T> static T f(T a, T b) { return a - b; }
  template <class T> static T da(T, T) { return T(1); }
  template <class T> static T db(T, T) { return T(-1); }
};
struct MulFn {
  template <class T> static T f(T a, T b) { return a * b; }
  template <class T> static T da(T, T b) { return b; }
  template <class T> static T db(T a, T) { return a; }
};
struct DivFn {  // ∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = −a/b²
  template <class T> static T f(T a, T b) { return a / b; }
  template <class T> static T da(T, T b) { return T(1) / b; }
  template <class T> static T db(T a, T b) { return -a / (b * b); }
};

template <class T, class Fn>
void binary_forward(T* y, const T* a, int64_t na, const T* b, int64_t nb, int64_t n) {
  if (na == n && nb == n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) y[i] = Fn::f(a[i], b[i]);
    return;
  }
  const int64_t inner = std::min(na, nb), rows = n / inner;
  const bool a_full = na == n, b_full = nb == n;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < inner; ++j) {
      int64_t i = r * inner + j;
      y[i] = Fn::f(a[a_full ? i : j], b[b_full ? i : j]);
    }
}

// Gradient into one operand x ∈ {a, b}; `wrt_a` selects the partial derivative.
template <class T, class Fn, bool wrt_a>
void binary_backward_into(T* dx, int64_t nx, const T* a, int64_t na, const T* b, int64_t nb, const T* dy,
                          int64_t n) {
  auto partial = [&](int64_t ia, int64_t ib) { return wrt_a ? Fn::da(a[ia], b[ib]) : Fn::db(a[ia], b[ib]); };
  const int64_t inner = std::min(na, nb);
  const bool a_full = na == n, b_full = nb == n;
  if (nx == n) {  // full-size operand: one output element per input element
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * partial(a_full ? i : i % inner, b_full ? i : i % inner);
    return;
  }
  // broadcast operand (a bias): dx[j] += Σ_r dy[r, j]·∂, over rows in a fixed order
  add_column_sums_of(dx, n / nx, nx, [&](int64_t r, int64_t j) {
    const int64_t i = r * nx + j;
    return dy[i] * partial(a_full ? i : j, b_full ? i : j);
  });
}

}  // namespace lava::kernels
