#pragma once
// Layer normalisation as a differentiable op (the kernels are in tensor/kernels_layernorm.hpp). Declared apart from
// autodiff/ops.hpp because only the self-attention encoder (nn/self_attention_encoder.hpp) uses it.
#include "autodiff/tape.hpp"

namespace lava {

// y = γ ⊙ (x − μ)/√(σ² + ε) + β over the last axis of x (..., H); γ, β: (H); μ, σ² per row.
template <class T> Var<T> layer_norm(Var<T> x, Var<T> gamma, Var<T> beta, T eps = T(1e-5));

}  // namespace lava
