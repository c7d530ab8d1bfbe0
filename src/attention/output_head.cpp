#include "attention/output_head.hpp"

#include <vector>

namespace lava {

namespace {
Var<float> activate(Var<float> x, bool relu_act) { return relu_act ? relu(x) : tanh(x); }
}  // namespace

Var<float> OutputHead::pair_rows(Ctx& c) const { return c.drop(activate(pair_add(query, memory), relu)); }

Var<float> OutputHead::log_f_all(Ctx& c, const int32_t* y) const {
  const int64_t B = query.dim(0), T = query.dim(1), S = memory.dim(1);
  std::vector<int32_t> labels(size_t(B * T * S));
  for (int64_t bt = 0; bt < B * T; ++bt)
    for (int64_t s = 0; s < S; ++s) labels[size_t(bt * S + s)] = y[bt];
  return linear_log_softmax_pick(pair_rows(c), W_gen, b_gen, labels.data());  // (B, T, S)
}

Var<float> OutputHead::enumerated_objective(Ctx& c, const int32_t* y, Var<float> lw, const float* weights,
                                            EnumeratedObjective kind, float* phi) const {
  return enumerated_output_objective(pair_rows(c), W_gen, b_gen, lw, y, weights, kind, phi);
}

Var<float> OutputHead::log_f_context(Ctx& c, Var<float> context, const int32_t* y) const {
  Var<float> o = c.drop(activate(add(query, context), relu));  // (B, T, Hd)
  return linear_log_softmax_pick(o, W_gen, b_gen, y);         // (B, T)
}

Var<float> OutputHead::log_f_weighted(Ctx& c, Var<float> w, const int32_t* y) const {
  return log_f_context(c, matmul(w, memory), y);
}

Var<float> OutputHead::log_probs_weighted(Ctx& c, Var<float> w) const {
  Var<float> o = c.drop(activate(add(query, matmul(w, memory)), relu));
  return log_softmax(add(matmul(o, W_gen), b_gen), -1);
}

}  // namespace lava
