// Products with a weight shared by many calls in one pass (a recurrent W_hh read at every time step):
//   y_u = x_u W;   dx_u += dy_u Wᵀ;   dW += Σ_u x_uᵀ dy_u        x_u: (M_u, in), W: (in, out), y_u: (M_u, out)
// Why: with M = 32 rows (a batch at one time step), each plain product packs the whole weight for the micro-kernel
// (a third of its time), and each dW product is a K = 32 GEMM that reads and writes all of dW. Here W and Wᵀ are
// packed once (pack_weight), and dW is a single GEMM over the stacked rows of every product: each product's
// backward copies x_u and dy_u into row block u of two stacks, and the last one to run (the first product made)
// adds Xᵀ·DY into dW. y and dx have the bits of matmul(x, W); dW sums over k = (u, row) in one fixed order.
#include <cstring>

#include "autodiff/ops.hpp"

namespace lava {

template <class T>
struct StackedWeightGrad {
  int rows = 0;      // Σ M_u over the products that need a gradient (their row blocks, in order of creation)
  int products = 0;  // how many of them
  int pending = 0;   // backward closures still to run in this backward pass
  T* xs = nullptr;   // (rows, in), allocated by the first closure to run
  T* dys = nullptr;  // (rows, out)
};

template <class T>
PackedWeight<T> pack_weight(Var<T> W) {
  LAVA_CHECK(W.rank() == 2, "pack_weight: W must be a matrix, got {}", W.shape().str());
  Tape<T>& tape = *W.tape;
  const int in = int(W.dim(0)), out = int(W.dim(1));
  PackedWeight<T> p;
  p.W = W;
  p.fwd = PackedB<T>{false, in, out, W.val(), out, tape.template scratch<T>(gemm_packed_b_size<T>(in, out))};
  gemm_pack_b(p.fwd);
  if (tape.grad_enabled()) {  // dx = dy Wᵀ: op(B) = Wᵀ, K = out, N = in
    p.bwd = PackedB<T>{true, out, in, W.val(), out, tape.template scratch<T>(gemm_packed_b_size<T>(out, in))};
    gemm_pack_b(p.bwd);
    p.grad = new (tape.template scratch<StackedWeightGrad<T>>(1)) StackedWeightGrad<T>{};
  }
  return p;
}

template <class T>
Var<T> matmul(Var<T> x, const PackedWeight<T>& w) {
  const int in = w.fwd.K, out = w.fwd.N;
  LAVA_CHECK(x.rank() >= 1 && x.shape().last() == in, "matmul: x {} and packed W ({}, {})", x.shape().str(), in,
             out);
  const int M = int(x.numel() / in);
  Shape s = x.shape();
  s[-1] = out;
  Var<T> y = x.tape->make_output(s, x, w.W);
  gemm<T>(false, M, T(1), x.val(), in, w.fwd, T(0), y.val(), out);
  if (!y.needs_grad()) return y;
  LAVA_CHECK(w.grad != nullptr, "matmul: weight packed with gradients off, used with gradients on");
  StackedWeightGrad<T>* g = w.grad;
  const int row0 = g->rows;
  g->rows += M, ++g->products, ++g->pending;
  x.tape->on_backward([x, y, W = w.W, bwd = w.bwd, g, row0, M, in, out] {
    if (x.needs_grad()) gemm<T>(false, M, T(1), y.grad(), out, bwd, T(1), x.grad(), in);
    if (!W.needs_grad()) return;
    if (!g->xs) {
      g->xs = x.tape->template scratch<T>(int64_t(g->rows) * in);
      g->dys = x.tape->template scratch<T>(int64_t(g->rows) * out);
    }
    std::memcpy(g->xs + int64_t(row0) * in, x.val(), sizeof(T) * size_t(M) * size_t(in));
    std::memcpy(g->dys + int64_t(row0) * out, y.grad(), sizeof(T) * size_t(M) * size_t(out));
    if (--g->pending == 0) {  // every product's rows are in: dW += Xᵀ DY
      gemm<T>(true, false, in, out, g->rows, T(1), g->xs, in, g->dys, out, T(1), W.grad(), out);
      g->pending = g->products;  // ready for another backward pass over the same tape
    }
  });
  return y;
}

#define LAVA_INSTANTIATE(T)                                 \
  template PackedWeight<T> pack_weight(Var<T>);             \
  template Var<T> matmul(Var<T>, const PackedWeight<T>&);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
