// layer_norm: forward kernel, then the backward record that reuses the cached row mean and 1/std.
#include "autodiff/ops_layernorm.hpp"

#include "core/check.hpp"
#include "tensor/kernels_layernorm.hpp"

namespace lava {

template <class T>
Var<T> layer_norm(Var<T> x, Var<T> gamma, Var<T> beta, T eps) {
  LAVA_PROFILE_OP("layer_norm");
  const Shape s = x.shape();
  LAVA_CHECK(s.rank >= 1 && gamma.rank() == 1 && beta.rank() == 1 && gamma.dim(0) == s.last() &&
                 beta.dim(0) == s.last(),
             "layer_norm: x {} gamma {} beta {}", s.str(), gamma.shape().str(), beta.shape().str());
  Tape<T>& tape = *x.tape;
  const int64_t H = s.last(), R = s.numel() / H;
  Var<T> y = tape.make_output(s, x, gamma, beta);
  T* mean = tape.template scratch<T>(R);  // (R)
  T* rstd = tape.template scratch<T>(R);  // (R)
  kernels::layer_norm_forward(y.val(), mean, rstd, x.val(), gamma.val(), beta.val(), R, H, eps);
  if (y.needs_grad())
    tape.on_backward([x, gamma, beta, y, mean, rstd, R, H] {
      kernels::layer_norm_backward(x.grad(), gamma.grad(), beta.grad(), y.grad(), x.val(), gamma.val(), mean, rstd,
                                   R, H);
    });
  return y;
}

template Var<float> layer_norm(Var<float>, Var<float>, Var<float>, float);
template Var<double> layer_norm(Var<double>, Var<double>, Var<double>, double);

}  // namespace lava
