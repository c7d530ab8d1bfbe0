// Elementwise unary ops: forward y = f(x), backward dx += dy · f'(x). The kernels are in tensor/kernels_unary.hpp.
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_unary.hpp"

namespace lava {

namespace {
template <class Fn, class T>
Var<T> unary(Var<T> x) {
  Var<T> y = x.tape->make_output(x.shape(), x);
  kernels::unary_forward<T, Fn>(y.val(), x.val(), x.numel());
  if (y.needs_grad())
    x.tape->on_backward([x, y] { kernels::unary_backward<T, Fn>(x.grad(), x.val(), y.val(), y.grad(), x.numel()); });
  return y;
}
}  // namespace

template <class T> Var<T> tanh(Var<T> x) {
  LAVA_PROFILE_OP("tanh");
  return unary<kernels::TanhFn>(x);
}
template <class T> Var<T> sigmoid(Var<T> x) {
  LAVA_PROFILE_OP("sigmoid");
  return unary<kernels::SigmoidFn>(x);
}
template <class T> Var<T> relu(Var<T> x) {
  LAVA_PROFILE_OP("relu");
  return unary<kernels::ReluFn>(x);
}
template <class T> Var<T> exp(Var<T> x) {
  LAVA_PROFILE_OP("exp");
  return unary<kernels::ExpFn>(x);
}
template <class T> Var<T> log(Var<T> x) {
  LAVA_PROFILE_OP("log");
  return unary<kernels::LogFn>(x);
}
template <class T> Var<T> softplus(Var<T> x) {
  LAVA_PROFILE_OP("softplus");
  return unary<kernels::SoftplusFn>(x);
}
template <class T> Var<T> lgamma(Var<T> x) {
  LAVA_PROFILE_OP("lgamma");
  return unary<kernels::LgammaFn>(x);
}
template <class T> Var<T> digamma(Var<T> x) {
  LAVA_PROFILE_OP("digamma");
  return unary<kernels::DigammaFn>(x);
}
template <class T> Var<T> square(Var<T> x) {
  LAVA_PROFILE_OP("square");
  return unary<kernels::SquareFn>(x);
}

#define LAVA_INSTANTIATE(T)                 \
  template Var<T> tanh(Var<T>);             \
  template Var<T> sigmoid(Var<T>);          \
  template Var<T> relu(Var<T>);             \
  template Var<T> exp(Var<T>);              \
  template Var<T> log(Var<T>);              \
  template Var<T> softplus(Var<T>);         \
  template Var<T> lgamma(Var<T>);           \
  template Var<T> digamma(Var<T>);          \
  template Var<T> square(Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
