// The fused additive attention scorer: one op for vᵀ tanh(q_t + k_i) over all (query, source position) pairs.
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_attention_score.hpp"

namespace lava {

template <class T>
Var<T> mlp_attention_scores(Var<T> q, Var<T> k, Var<T> v) {
  LAVA_PROFILE_OP("mlp_attention_scores");
  LAVA_CHECK(q.rank() == 3 && k.rank() == 3 && q.dim(0) == k.dim(0) && q.dim(2) == k.dim(2) &&
                 v.numel() == q.dim(2),
             "mlp_attention_scores: q {} k {} v {}", q.shape().str(), k.shape().str(), v.shape().str());
  Tape<T>& tape = *q.tape;
  const int64_t B = q.dim(0), Tn = q.dim(1), S = k.dim(1), A = q.dim(2);
  Var<T> s = tape.make_output(Shape{B, Tn, S}, q, k, v);
  T* u = tape.template scratch<T>(B * Tn * S * A);
  kernels::mlp_attention_scores_forward(s.val(), u, q.val(), k.val(), v.val(), B, Tn, S, A);
  if (s.needs_grad()) {
    T* dv_part = v.needs_grad() ? tape.template scratch<T>(B * A) : nullptr;
    tape.on_backward([q, k, v, s, u, dv_part, B, Tn, S, A] {
      kernels::mlp_attention_scores_backward(q.grad(), k.grad(), v.grad(), dv_part, s.grad(), u, v.val(), B, Tn, S,
                                             A);
    });
  }
  return s;
}

template Var<float> mlp_attention_scores(Var<float>, Var<float>, Var<float>);
template Var<double> mlp_attention_scores(Var<double>, Var<double>, Var<double>);

}  // namespace lava
