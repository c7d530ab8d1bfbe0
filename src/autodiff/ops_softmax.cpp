// softmax, log_softmax and logsumexp over one axis.
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_softmax.hpp"

namespace lava {

namespace {
template <class T>
Var<T> softmax_op(Var<T> x, int axis, bool log_space) {
  const Shape s = x.shape();
  const int64_t outer = s.outer(axis), n = s[s.norm_axis(axis)], inner = s.inner(axis);
  Var<T> y = x.tape->make_output(s, x);
  kernels::softmax_forward(y.val(), x.val(), outer, n, inner, log_space);
  if (y.needs_grad())
    x.tape->on_backward([x, y, outer, n, inner, log_space] {
      kernels::softmax_backward(x.grad(), y.val(), y.grad(), outer, n, inner, log_space);
    });
  return y;
}
}  // namespace

template <class T> Var<T> softmax(Var<T> x, int axis) {
  LAVA_PROFILE_OP("softmax");
  return softmax_op(x, axis, false);
}
template <class T> Var<T> log_softmax(Var<T> x, int axis) {
  LAVA_PROFILE_OP("log_softmax");
  return softmax_op(x, axis, true);
}

template <class T>
Var<T> logsumexp(Var<T> x, int axis) {
  LAVA_PROFILE_OP("logsumexp");
  const Shape s = x.shape();
  const int64_t outer = s.outer(axis), n = s[s.norm_axis(axis)], inner = s.inner(axis);
  Var<T> y = x.tape->make_output(s.without(axis), x);
  kernels::logsumexp_forward(y.val(), x.val(), outer, n, inner);
  if (y.needs_grad())
    x.tape->on_backward([x, y, outer, n, inner] {
      kernels::logsumexp_backward(x.grad(), x.val(), y.val(), y.grad(), outer, n, inner);
    });
  return y;
}

#define LAVA_INSTANTIATE(T)                     \
  template Var<T> softmax(Var<T>, int);         \
  template Var<T> log_softmax(Var<T>, int);     \
  template Var<T> logsumexp(Var<T>, int);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
