// Shape ops: reshape and rows (views), slice and concat along an axis, the same slice of several tensors stacked,
// transpose of the last two axes.
#include <algorithm>

#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_index.hpp"

namespace lava {

template <class T>
Var<T> reshape(Var<T> x, const Shape& s) {
  LAVA_PROFILE_OP("reshape");
  LAVA_CHECK(s.numel() == x.numel(), "reshape {} to {}", x.shape().str(), s.str());
  return x.tape->external(s, x.val(), x.grad());  // same buffers: gradients flow without a record
}

// y = x[..., start : start+len, ...] along `axis`;  dx[..., start+i, ...] += dy[..., i, ...]
template <class T>
Var<T> slice(Var<T> x, int axis, int64_t start, int64_t len) {
  LAVA_PROFILE_OP("slice");
  const Shape s = x.shape();
  const int a = s.norm_axis(axis);
  const int64_t n = s[a], outer = s.outer(a), inner = s.inner(a);
  LAVA_CHECK(start >= 0 && len >= 0 && start + len <= n, "slice [{}, {}) of axis {} in {}", start, start + len, a,
             s.str());
  Var<T> y = x.tape->make_output(s.with(a, len), x);
  kernels::copy_axis_block<T, false>(y.val(), len, 0, x.val(), n, start, outer, len, inner);
  if (y.needs_grad())
    x.tape->on_backward([x, y, n, start, outer, len, inner] {
      kernels::copy_axis_block<T, true>(x.grad(), n, start, y.grad(), len, 0, outer, len, inner);
    });
  return y;
}

// y = x[start : start+len] along axis 0, a view (rows of a row-major tensor are contiguous): no copy, no record.
template <class T>
Var<T> rows(Var<T> x, int64_t start, int64_t len) {
  LAVA_PROFILE_OP("rows");
  const Shape s = x.shape();
  LAVA_CHECK(s.rank >= 1 && start >= 0 && len >= 0 && start + len <= s[0], "rows [{}, {}) of {}", start,
             start + len, s.str());
  const int64_t offset = start * s.inner(0);
  return x.tape->external(s.with(0, len), x.val() + offset, x.needs_grad() ? x.grad() + offset : nullptr);
}

// y = [slice(x_0, axis, start, len); slice(x_1, ...); ...] stacked along axis 0 (axis ≥ 1, all x_k of one shape),
// written straight into y: x_k's slice is the contiguous block k of y.   dx_k[..., start+i, ...] += dy_k[..., i, ...]
template <class T>
Var<T> slice_stacked(const Var<T>* xs, int count, int axis, int64_t start, int64_t len) {
  LAVA_PROFILE_OP("slice_stacked");
  const Shape s = xs[0].shape();
  const int a = s.norm_axis(axis);
  const int64_t n = s[a], outer = s.outer(a), inner = s.inner(a), block = outer * len * inner;
  LAVA_CHECK(count >= 1 && a >= 1 && start >= 0 && len >= 0 && start + len <= n,
             "slice_stacked: [{}, {}) of axis {} in {} x{}", start, start + len, a, s.str(), count);
  bool any_grad = false;
  for (int k = 0; k < count; ++k) {
    LAVA_CHECK(xs[k].shape() == s, "slice_stacked: {} and {} differ", xs[k].shape().str(), s.str());
    any_grad = any_grad || xs[k].needs_grad();
  }
  Tape<T>& tape = *xs[0].tape;
  Var<T> y = tape.make(s.with(a, len).with(0, count * s[0]), any_grad);
  for (int k = 0; k < count; ++k)
    kernels::copy_axis_block<T, false>(y.val() + k * block, len, 0, xs[k].val(), n, start, outer, len, inner);
  if (!y.needs_grad()) return y;
  Var<T>* x = tape.template scratch<Var<T>>(count);  // the closure keeps trivially destructible captures only
  std::copy(xs, xs + count, x);
  tape.on_backward([x, y, count, n, start, outer, len, inner, block] {
    for (int k = 0; k < count; ++k)
      if (x[k].needs_grad())
        kernels::copy_axis_block<T, true>(x[k].grad(), n, start, y.grad() + k * block, len, 0, outer, len, inner);
  });
  return y;
}

// y = [x_0, x_1, ...] along `axis`; each input gets back its block of dy.
template <class T>
Var<T> concat(const Var<T>* xs, int count, int axis) {
  LAVA_PROFILE_OP("concat");
  LAVA_CHECK(count >= 1, "concat of nothing");
  Tape<T>& tape = *xs[0].tape;
  const Shape s0 = xs[0].shape();  // a copy: make() below may move the node list the reference points into
  const int a = s0.norm_axis(axis);
  int64_t total = 0;
  bool any_grad = false;
  for (int k = 0; k < count; ++k) {
    LAVA_CHECK(xs[k].shape().with(a, s0[a]) == s0, "concat: {} and {} differ off axis {}", xs[k].shape().str(),
               s0.str(), a);
    total += xs[k].shape()[a];
    any_grad = any_grad || xs[k].needs_grad();
  }
  Var<T> y = tape.make(s0.with(a, total), any_grad);
  const int64_t outer = s0.outer(a), inner = s0.inner(a);
  Var<T>* kept = tape.template scratch<Var<T>>(count);  // Var is trivially copyable: safe on the arena
  int64_t off = 0;
  for (int k = 0; k < count; ++k) {
    kept[k] = xs[k];
    const int64_t len = xs[k].shape()[a];
    kernels::copy_axis_block<T, false>(y.val(), total, off, xs[k].val(), len, 0, outer, len, inner);
    off += len;
  }
  if (y.needs_grad())
    tape.on_backward([y, kept, count, a, total, outer, inner] {
      int64_t off = 0;
      for (int k = 0; k < count; ++k) {
        const int64_t len = kept[k].shape()[a];
        if (kept[k].needs_grad())
          kernels::copy_axis_block<T, true>(kept[k].grad(), len, 0, y.grad(), total, off, outer, len, inner);
        off += len;
      }
    });
  return y;
}

template <class T>
Var<T> concat(std::initializer_list<Var<T>> xs, int axis) {
  return concat(xs.begin(), int(xs.size()), axis);
}

template <class T>
Var<T> transpose(Var<T> x) {
  LAVA_PROFILE_OP("transpose");
  const Shape s = x.shape();
  LAVA_CHECK(s.rank >= 2, "transpose needs rank >= 2, got {}", s.str());
  const int64_t rows = s[-2], cols = s[-1], batch = s.numel() / (rows * cols);
  Shape out = s;
  out[-2] = cols;
  out[-1] = rows;
  Var<T> y = x.tape->make_output(out, x);
  kernels::transpose_last2<T, false>(y.val(), x.val(), batch, rows, cols);
  if (y.needs_grad())
    x.tape->on_backward(
        [x, y, batch, rows, cols] { kernels::transpose_last2<T, true>(x.grad(), y.grad(), batch, cols, rows); });
  return y;
}

#define LAVA_INSTANTIATE(T)                                                 \
  template Var<T> reshape(Var<T>, const Shape&);                            \
  template Var<T> slice(Var<T>, int, int64_t, int64_t);                     \
  template Var<T> rows(Var<T>, int64_t, int64_t);                           \
  template Var<T> slice_stacked(const Var<T>*, int, int, int64_t, int64_t); \
  template Var<T> concat(const Var<T>*, int, int);                          \
  template Var<T> concat(std::initializer_list<Var<T>>, int);               \
  template Var<T> transpose(Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
