// Products with a weight shared by many calls in one pass (a recurrent W_hh read at every time step):
//   y_u = x_u W;   dx_u += dy_u Wᵀ;   dW += Σ_u x_uᵀ dy_u        x_u: (M_u, in), W: (in, out), y_u: (M_u, out)
// Why: with M = 32 rows (a batch at one time step), each plain product packs the whole weight for the micro-kernel
// (a third of its time), and each dW product is a K = 32 GEMM that reads and writes all of dW. Here W and Wᵀ are
// packed once (pack_weight), and dW is a single GEMM over the stacked rows of every product: each product's
// backward copies x_u and dy_u into row block u of two stacks, and the last one to run (the first product made)
// adds Xᵀ·DY into dW. y and dx have the bits of matmul(x, W); dW sums over k = (u, row) in one fixed order.
// matmul_blocks runs G such products side by side, block g of x with weight g, one thread per block: independent
// recurrences (the two directions of a bidirectional LSTM) then share one parallel region per step, each product
// whole on one thread, instead of splitting every 32-row product over the threads. Each block's product is the
// same GEMM call as matmul(x_g, w_g), which gives the same bits on any thread, so the results are those of G
// separate matmul calls.
#include <omp.h>

#include <cstring>

#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "core/parallel.hpp"

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
  LAVA_PROFILE_OP("pack_weight");
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

namespace {

// Product u of a weight: claims its rows [row0, row0 + M) in the weight's stacks (in order of creation).
template <class T>
int claim_rows(StackedWeightGrad<T>* g, int M) {
  const int row0 = g->rows;
  g->rows += M, ++g->products, ++g->pending;
  return row0;
}

// The stacks, allocated by the first closure to run (tape scratch: call outside parallel regions).
template <class T>
void reserve_stacks(Tape<T>& tape, StackedWeightGrad<T>* g, int in, int out) {
  if (g->xs) return;
  g->xs = tape.template scratch<T>(int64_t(g->rows) * in);
  g->dys = tape.template scratch<T>(int64_t(g->rows) * out);
}

// One product's backward: dx += dy Wᵀ (dx null: not wanted), and x and dy copied into its row block of the stacks.
// Touches only this product's rows and dx, so the products of different weights may run at the same time.
//   x, dx: (M, in); dy: (M, out)
template <class T>
void product_backward(const T* x, T* dx, const T* dy, const PackedWeight<T>& w, int row0, int M) {
  const int in = w.fwd.K, out = w.fwd.N;
  if (dx) gemm<T>(false, M, T(1), dy, out, w.bwd, T(1), dx, in);
  if (!w.W.needs_grad()) return;
  std::memcpy(w.grad->xs + int64_t(row0) * in, x, sizeof(T) * size_t(M) * size_t(in));
  std::memcpy(w.grad->dys + int64_t(row0) * out, dy, sizeof(T) * size_t(M) * size_t(out));
}

// After a product's backward: when every product's rows are in, dW += Xᵀ DY (then ready for another pass).
template <class T>
void finish_product(const PackedWeight<T>& w) {
  StackedWeightGrad<T>* g = w.grad;
  if (!w.W.needs_grad() || --g->pending > 0) return;
  const int in = w.fwd.K, out = w.fwd.N;
  gemm<T>(true, false, in, out, g->rows, T(1), g->xs, in, g->dys, out, T(1), w.W.grad(), out);
  g->pending = g->products;
}

}  // namespace

// One product: matmul_blocks with a single block, over x's rows, shaped back like x.
template <class T>
Var<T> matmul(Var<T> x, const PackedWeight<T>& w) {
  LAVA_PROFILE_OP("matmul (packed weight)");
  const int in = w.fwd.K, out = w.fwd.N;
  LAVA_CHECK(x.rank() >= 1 && x.shape().last() == in, "matmul: x {} and packed W ({}, {})", x.shape().str(), in,
             out);
  Shape s = x.shape();
  s[-1] = out;
  return reshape(matmul_blocks(reshape(x, Shape{x.numel() / in, in}), &w, 1), s);
}

template <class T>
Var<T> matmul_blocks(Var<T> x, const PackedWeight<T>* ws, int G) {
  LAVA_PROFILE_OP("matmul_blocks");
  LAVA_CHECK(G >= 1 && x.rank() == 2 && x.dim(0) % G == 0, "matmul_blocks: x {} in {} row blocks", x.shape().str(),
             G);
  const int in = ws[0].fwd.K, out = ws[0].fwd.N, M = int(x.dim(0) / G);
  for (int g = 0; g < G; ++g)
    LAVA_CHECK(ws[g].fwd.K == in && ws[g].fwd.N == out && x.dim(1) == in,
               "matmul_blocks: x {} and packed W{} ({}, {})", x.shape().str(), g, ws[g].fwd.K, ws[g].fwd.N);
  Tape<T>& tape = *x.tape;
  bool needs_grad = x.needs_grad();
  for (int g = 0; g < G; ++g) needs_grad = needs_grad || ws[g].W.needs_grad();
  Var<T> y = tape.make(Shape{x.dim(0), out}, needs_grad);
  const bool side_by_side = G > 1 && omp_get_level() == 0 && omp_get_max_threads() > 1;
  for_each_split_if(G, side_by_side, [&](int g) {
    gemm<T>(false, M, T(1), x.val() + int64_t(g) * M * in, in, ws[g].fwd, T(0), y.val() + int64_t(g) * M * out, out);
  });
  if (!y.needs_grad()) return y;
  // The closure keeps trivially destructible captures only: the weights and their first rows go on the tape.
  PackedWeight<T>* w = tape.template scratch<PackedWeight<T>>(G);
  int* row0 = tape.template scratch<int>(G);
  for (int g = 0; g < G; ++g) {
    LAVA_CHECK(ws[g].grad != nullptr, "matmul_blocks: weight packed with gradients off, used with gradients on");
    new (w + g) PackedWeight<T>(ws[g]);
    row0[g] = claim_rows(ws[g].grad, M);
  }
  tape.on_backward([x, y, w, row0, G, M, side_by_side] {
    const int in = w[0].fwd.K, out = w[0].fwd.N;
    for (int g = 0; g < G; ++g)
      if (w[g].W.needs_grad()) reserve_stacks(*x.tape, w[g].grad, in, out);
    for_each_split_if(G, side_by_side, [&](int g) {
      const int64_t r0 = int64_t(g) * M;
      product_backward(x.val() + r0 * in, x.needs_grad() ? x.grad() + r0 * in : nullptr, y.grad() + r0 * out, w[g],
                       row0[g], M);
    });
    for (int g = 0; g < G; ++g) finish_product(w[g]);
  });
  return y;
}

#define LAVA_INSTANTIATE(T)                                           \
  template PackedWeight<T> pack_weight(Var<T>);                       \
  template Var<T> matmul(Var<T>, const PackedWeight<T>&);             \
  template Var<T> matmul_blocks(Var<T>, const PackedWeight<T>*, int);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
