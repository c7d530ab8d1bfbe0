#pragma once
// Operands of an elementwise distribution op (a sampler or a closed-form KL) with suffix broadcasting, the rule of the
// binary ops in autodiff/ops.hpp extended to K operands: the output takes the largest operand shape, every operand's
// shape must equal its trailing dimensions, and operand j (size[j] elements, a divisor of n) is read at i mod size[j].
// So a scalar hyperparameter (shape ()) or a per-feature vector broadcasts over a (B, T, S) tensor.
//
// Gradients: the backward loop calls add_grad(j, i, dy[i]·∂y[i]/∂x_j) once per (operand, element). A full-size
// operand owns element i, so the loop may run on several threads. A broadcast operand's terms go to a scratch buffer
// (n) first and finish() sums them over the leading rows in row order: the result does not depend on the thread count.
#include <cstdint>
#include <initializer_list>

#include "autodiff/tape.hpp"
#include "core/check.hpp"

namespace lava {

template <class T, int K>
struct Operands {
  const T* val[K] = {};   // operand values (size[j])
  T* grad[K] = {};        // operand gradients (size[j]), nullptr when the operand needs none
  T* spread[K] = {};      // (n) per-element gradient terms of a broadcast operand, summed by finish()
  int64_t size[K] = {};
  int64_t n = 0;          // output elements
  Shape shape;            // output shape

  explicit Operands(std::initializer_list<Var<T>> xs) {
    LAVA_CHECK(xs.size() == size_t(K), "{} operands given, {} expected", xs.size(), K);
    int j = 0;
    for (const Var<T>& x : xs) {
      if (j == 0 || x.numel() > shape.numel() || (x.numel() == shape.numel() && x.rank() > shape.rank))
        shape = x.shape();
      val[j] = x.val();
      grad[j] = x.grad();
      size[j] = x.numel();
      ++j;
    }
    for (const Var<T>& x : xs)
      LAVA_CHECK(shape.has_suffix(x.shape()), "cannot broadcast {} to {}", x.shape().str(), shape.str());
    n = shape.numel();
  }

  // Operand j at output element i.
  T at(int j, int64_t i) const { return val[j][size[j] == n ? i : i % size[j]]; }
  bool full(int j) const { return size[j] == n; }

  // Called once the output node exists and needs a gradient: scratch for the broadcast operands that need one.
  void prepare_backward(Tape<T>& tape) {
    for (int j = 0; j < K; ++j)
      if (grad[j] && !full(j)) spread[j] = tape.template scratch<T>(n);
  }

  void add_grad(int j, int64_t i, T g) const {
    if (!grad[j]) return;
    if (full(j))
      grad[j][i] += g;
    else
      spread[j][i] = g;
  }

  // grad_j[c] += Σ_r spread_j[r·size_j + c] for each broadcast operand, rows in order.
  void finish() const {
    for (int j = 0; j < K; ++j) {
      if (!grad[j] || full(j)) continue;
      const int64_t m = size[j], rows = m ? n / m : 0;
      for (int64_t c = 0; c < m; ++c) {
        T acc = T(0);
        for (int64_t r = 0; r < rows; ++r) acc += spread[j][r * m + c];
        grad[j][c] += acc;
      }
    }
  }
};

}  // namespace lava
