// Sums and means over one axis (the axis removed) and over everything (a scalar).
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_reduce.hpp"

namespace lava {

namespace {
template <class T>
Var<T> reduce_axis(Var<T> x, int axis, bool average) {
  const Shape s = x.shape();
  const int64_t outer = s.outer(axis), n = s[s.norm_axis(axis)], inner = s.inner(axis);
  const T scale = average ? T(1) / T(n) : T(1);
  Var<T> y = x.tape->make_output(s.without(axis), x);
  kernels::sum_axis_forward(y.val(), x.val(), outer, n, inner, scale);
  if (y.needs_grad())
    x.tape->on_backward(
        [x, y, outer, n, inner, scale] { kernels::sum_axis_backward(x.grad(), y.grad(), outer, n, inner, scale); });
  return y;
}

template <class T>
Var<T> reduce_all(Var<T> x, bool average) {
  const int64_t n = x.numel();
  const T scale = average ? T(1) / T(n) : T(1);
  Var<T> y = x.tape->make_output(Shape{}, x);
  y.val()[0] = scale * kernels::sum_all_fixed_order(x.val(), n);
  if (y.needs_grad())  // dx[i] += scale · dy  (a sum over one axis of length n, seen as (1, n, 1))
    x.tape->on_backward([x, y, n, scale] { kernels::sum_axis_backward(x.grad(), y.grad(), 1, n, 1, scale); });
  return y;
}
}  // namespace

template <class T> Var<T> sum(Var<T> x, int axis) {
  LAVA_PROFILE_OP("sum");
  return reduce_axis(x, axis, false);
}
template <class T> Var<T> mean(Var<T> x, int axis) {
  LAVA_PROFILE_OP("mean");
  return reduce_axis(x, axis, true);
}
template <class T> Var<T> sum_all(Var<T> x) {
  LAVA_PROFILE_OP("sum_all");
  return reduce_all(x, false);
}
template <class T> Var<T> mean_all(Var<T> x) {
  LAVA_PROFILE_OP("mean_all");
  return reduce_all(x, true);
}

#define LAVA_INSTANTIATE(T)              \
  template Var<T> sum(Var<T>, int);      \
  template Var<T> mean(Var<T>, int);     \
  template Var<T> sum_all(Var<T>);       \
  template Var<T> mean_all(Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
