// Elementwise binary ops with suffix broadcasting, and the affine map y = αx + β.
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_binary.hpp"

namespace lava {

namespace {
template <class Fn, class T>
Var<T> binary(Var<T> a, Var<T> b) {
  const Shape sa = a.shape();
  const Shape sb = b.shape();
  LAVA_CHECK(sa.has_suffix(sb) || sb.has_suffix(sa), "cannot broadcast {} with {}", sa.str(), sb.str());
  const Shape out = sa.has_suffix(sb) ? sa : sb;
  Var<T> y = a.tape->make_output(out, a, b);
  const int64_t n = out.numel(), na = a.numel(), nb = b.numel();
  kernels::binary_forward<T, Fn>(y.val(), a.val(), na, b.val(), nb, n);
  if (y.needs_grad())
    a.tape->on_backward([a, b, y, n, na, nb] {
      if (a.needs_grad())
        kernels::binary_backward_into<T, Fn, true>(a.grad(), na, a.val(), na, b.val(), nb, y.grad(), n);
      if (b.needs_grad())
        kernels::binary_backward_into<T, Fn, false>(b.grad(), nb, a.val(), na, b.val(), nb, y.grad(), n);
    });
  return y;
}
}  // namespace

template <class T> Var<T> add(Var<T> a, Var<T> b) {
  LAVA_PROFILE_OP("add");
  return binary<kernels::AddFn>(a, b);
}
template <class T> Var<T> sub(Var<T> a, Var<T> b) {
  LAVA_PROFILE_OP("sub");
  return binary<kernels::SubFn>(a, b);
}
template <class T> Var<T> mul(Var<T> a, Var<T> b) {
  LAVA_PROFILE_OP("mul");
  return binary<kernels::MulFn>(a, b);
}
template <class T> Var<T> div(Var<T> a, Var<T> b) {
  LAVA_PROFILE_OP("div");
  return binary<kernels::DivFn>(a, b);
}

// y = αx + β;  dx += α·dy
template <class T>
Var<T> affine(Var<T> x, T alpha, T beta) {
  LAVA_PROFILE_OP("affine");
  Var<T> y = x.tape->make_output(x.shape(), x);
  const int64_t n = x.numel();
  const T* xv = x.val();
  T* yv = y.val();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) yv[i] = alpha * xv[i] + beta;
  if (y.needs_grad())
    x.tape->on_backward([x, y, alpha, n] {
      T* dx = x.grad();
      const T* dy = y.grad();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
      for (int64_t i = 0; i < n; ++i) dx[i] += alpha * dy[i];
    });
  return y;
}

#define LAVA_INSTANTIATE(T)                  \
  template Var<T> add(Var<T>, Var<T>);       \
  template Var<T> sub(Var<T>, Var<T>);       \
  template Var<T> mul(Var<T>, Var<T>);       \
  template Var<T> div(Var<T>, Var<T>);       \
  template Var<T> affine(Var<T>, T, T);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
