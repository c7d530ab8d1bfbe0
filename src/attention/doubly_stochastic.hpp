#pragma once
// Show, Attend and Tell's doubly stochastic attention penalty (Xu et al. 2015 §4.2.1; method.md §3.2):
//   P = Σ_b Σ_i (1 − Σ_t m_bt α_bti)²
// for attention weights α (B, T, S) and the token mask m (B, T) given as a constant of shape (B, T, S) (m_bt
// repeated over i). It pushes every position to be attended about once over a caption. Composed of existing ops
// (mul, sum, affine, square, sum_all), so its gradient is theirs, ∂P/∂α_bti = −2 m_bt (1 − Σ_t m_bt α_bti); a
// template so that the gradient check runs it in double (autodiff/gradcheck's caption case).
#include "autodiff/ops.hpp"

namespace lava {

template <class T>
Var<T> doubly_stochastic_penalty(Var<T> alpha, Var<T> mask_bts) {
  Var<T> attended = sum(mul(alpha, mask_bts), 1);    // Σ_t m_bt α_bti: (B, S)
  return sum_all(square(affine(attended, T(-1), T(1))));  // Σ_b Σ_i (1 − ·)²
}

}  // namespace lava
