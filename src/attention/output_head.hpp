#pragma once
// The output distribution f(x, z)_y of an attention model, in the form both tasks share:
//   f(x, z = i) = softmax(W_g · act(A_q + U_i) + b_g)
// where A_q is the query's part (decoder state or question, bias included) and U_i = x_i W_x the memory's part
// (NMT: act = tanh, o = tanh(W_out [h; x_i] + b); VQA: act = relu, the answer MLP on [x_i; x̃]).
// Because U enters linearly, a weighted context Σ_i w_i x_i gives act(A_q + Σ_i w_i U_i): soft attention,
// Gumbel-softmax and one-hot samples all use log_f_weighted; enumeration uses log_f_all.
#include <cstdint>

#include "nn/layers.hpp"

namespace lava {

struct OutputHead {
  Var<float> query;   // (B, T, Hd): A_q for each of T queries per batch row (T = 1 for VQA)
  Var<float> memory;  // (B, S, Hd): U_i
  Var<float> W_gen;   // (Hd, V)
  Var<float> b_gen;   // (V)
  bool relu = false;  // act = relu, else tanh

  // log f(x, e_s)_{y[b,t]} for every source position s: (B, T, S). One output layer per (b, t, s): the fused,
  // chunked linear_log_softmax_pick keeps memory at O(B·T·S·Hd), never O(B·T·S·V).
  Var<float> log_f_all(Ctx& c, const int32_t* y) const;
  // The enumerated variants' objective Σ_{b,t} c[b,t] Φ[b,t] over the same rows as log_f_all, with Φ = log Σ_s
  // exp(lw + log f) (marginal) or Σ_s exp(lw) log f (expected) for lw (B, T, S): enumerated_output_objective, whose
  // gradient is formed in its forward pass. c: (B, T) constants; phi (B, T), if not null, receives Φ.
  Var<float> enumerated_objective(Ctx& c, const int32_t* y, Var<float> lw, const float* weights,
                                  EnumeratedObjective kind, float* phi) const;
  // log f(x, Σ_s w[b,t,s] e_s)_{y[b,t]}: (B, T), for weights w (B, T, S).
  Var<float> log_f_weighted(Ctx& c, Var<float> w, const int32_t* y) const;
  // log f at a given context in the head's memory space, act(A_q + context)_{y}: context (B, T, Hd) -> (B, T).
  Var<float> log_f_context(Ctx& c, Var<float> context, const int32_t* y) const;
  // The full output distribution log f(x, Σ_s w e_s) over the vocabulary: (B, T, V) (decoding, small batches).
  Var<float> log_probs_weighted(Ctx& c, Var<float> w) const;
  // act(A_q + U_s) for every (b, t, s), after dropout: (B, T, S, Hd), the output layer's input rows (the sparse
  // variants gather their support's rows from it).
  Var<float> pair_rows(Ctx& c) const;
};

}  // namespace lava
