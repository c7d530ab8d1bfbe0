#pragma once
// Differentiable ops on Var<T>, T = float (training) or double (gradient checks, the toy).
// Each op's forward kernel and backward record sit side by side in src/autodiff/ops_<family>.cpp;
// the raw kernels live in src/tensor/ and every one of them has a gradient check (autodiff/gradcheck_cases.cpp).
//
// Broadcasting (binary ops, masked_fill): the smaller operand's shape must equal the trailing dimensions of the
// larger one, e.g. (B, T, H) + (H); it is repeated over the leading dimensions, and its gradient sums over them.
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "autodiff/tape.hpp"
#include "gemm/gemm.hpp"
#include "core/rng.hpp"

namespace lava {

// ---- elementwise binary (ops_binary.cpp) ----
template <class T> Var<T> add(Var<T> a, Var<T> b);
template <class T> Var<T> sub(Var<T> a, Var<T> b);
template <class T> Var<T> mul(Var<T> a, Var<T> b);
template <class T> Var<T> div(Var<T> a, Var<T> b);
// y = alpha·x + beta (scalars are constants)
template <class T> Var<T> affine(Var<T> x, T alpha, T beta);

// ---- elementwise unary (ops_unary.cpp) ----
template <class T> Var<T> tanh(Var<T> x);
template <class T> Var<T> sigmoid(Var<T> x);
template <class T> Var<T> relu(Var<T> x);
template <class T> Var<T> exp(Var<T> x);
template <class T> Var<T> log(Var<T> x);
template <class T> Var<T> softplus(Var<T> x);  // log(1 + e^x)
template <class T> Var<T> lgamma(Var<T> x);    // log Γ(x), x > 0
template <class T> Var<T> digamma(Var<T> x);   // ψ(x) = d/dx log Γ(x), x > 0
template <class T> Var<T> square(Var<T> x);

// ---- reductions over one axis, the axis removed (ops_reduce.cpp) ----
template <class T> Var<T> sum(Var<T> x, int axis);
template <class T> Var<T> mean(Var<T> x, int axis);
template <class T> Var<T> sum_all(Var<T> x);  // scalar; fixed-order chunked sum
template <class T> Var<T> mean_all(Var<T> x);

// ---- normalisers over one axis (ops_softmax.cpp) ----
template <class T> Var<T> softmax(Var<T> x, int axis);
template <class T> Var<T> log_softmax(Var<T> x, int axis);
template <class T> Var<T> logsumexp(Var<T> x, int axis);  // the axis removed

// ---- sparse normalisers over the last axis (ops_sparsemax.cpp) ----
// sparsemax(x) = argmin_{p ∈ simplex} ‖p − x‖² = [x − τ]_+ and entmax15(x) = [x/2 − τ]_+² (α-entmax, α = 1.5), τ
// set by Σ p = 1 per row, exactly (sort-based): probabilities exactly 0 below the threshold. Rows of x (..., n) are
// independent; positions with mask[i] = 1 (mask null or of x's shape) or x = −inf are excluded (p = 0, never in
// the support), and a row with none left is all zeros. support (one per row), if not null, receives #{i : p_i > 0}.
// Cost O(n log n) a row (the sort). The backward pass is zero off the support.
template <class T> Var<T> sparsemax(Var<T> x, const uint8_t* mask = nullptr, int32_t* support = nullptr);
template <class T> Var<T> entmax15(Var<T> x, const uint8_t* mask = nullptr, int32_t* support = nullptr);

// ---- products (ops_matmul.cpp) ----
// a: (..., M, K) or, with trans_a, (K, M) (rank 2 only); b: (K, N) or, with trans_b, (N, K).
// If b has rank 3, a must have rank 3 with the same leading batch: a batched product (Bt, M, N).
template <class T> Var<T> matmul(Var<T> a, Var<T> b, bool trans_a = false, bool trans_b = false);
// A weight W (in, out) read by many products in one pass, packed once for the GEMM kernel (ops_matmul_packed.cpp):
// w = pack_weight(W) once, then matmul(x, w) at every step. The packed copies live in the tape's scratch (the
// pass's lifetime); Wᵀ is packed for the backward pass only when gradients are on. y and dx have the bits of
// matmul(x, W); dW is one GEMM over the rows of all the products (StackedWeightGrad), not one per product.
template <class T>
struct StackedWeightGrad;
template <class T>
struct PackedWeight {
  Var<T> W;
  PackedB<T> fwd, bwd;                     // W for y = x W;  Wᵀ for dx = dy Wᵀ
  StackedWeightGrad<T>* grad = nullptr;    // tape scratch, shared by every product made with this weight
};
template <class T> PackedWeight<T> pack_weight(Var<T> W);
template <class T> Var<T> matmul(Var<T> x, const PackedWeight<T>& w);
// G products side by side: x (G·M, in), rows [g·M, (g+1)·M) times ws[g] -> (G·M, out), one thread per block (the
// directions of a bidirectional LSTM). The same bits as G calls of matmul(x_g, ws[g]).
template <class T> Var<T> matmul_blocks(Var<T> x, const PackedWeight<T>* ws, int G);

// ---- indexing (ops_index.cpp); index arrays are copied onto the tape ----
// rows of table (V, E) at ids (any shape `ids_shape`) -> ids_shape + (E); backward scatter-adds.
template <class T> Var<T> embedding(Var<T> table, const int32_t* ids, const Shape& ids_shape);
// y[r] = x[r, idx[r]] for x (..., C): the log-probability of given labels when x is a log-softmax.
template <class T> Var<T> pick(Var<T> x, const int32_t* idx);
// y = mask ? value : x, mask (0/1 bytes) broadcast over leading dimensions like a binary op.
template <class T> Var<T> masked_fill(Var<T> x, const uint8_t* mask, const Shape& mask_shape, T value);

// ---- shape (ops_shape.cpp) ----
template <class T> Var<T> reshape(Var<T> x, const Shape& s);  // a view: shares value and gradient
template <class T> Var<T> slice(Var<T> x, int axis, int64_t start, int64_t len);
template <class T> Var<T> rows(Var<T> x, int64_t start, int64_t len);  // a view of x[start : start+len] (axis 0)
// The same slice (axis ≥ 1) of several tensors of one shape, stacked along axis 0 without intermediate copies.
template <class T> Var<T> slice_stacked(const Var<T>* xs, int count, int axis, int64_t start, int64_t len);
template <class T> Var<T> concat(std::initializer_list<Var<T>> xs, int axis);
template <class T> Var<T> concat(const Var<T>* xs, int count, int axis);
template <class T> Var<T> transpose(Var<T> x);  // swaps the last two axes

// ---- randomness (ops_dropout.cpp) ----
// Inverted dropout: keep with probability 1-p and scale by 1/(1-p); element i keeps iff rng.uniform(i) >= p.
template <class T> Var<T> dropout(Var<T> x, T p, const CounterRng& rng, bool training);

// ---- fused LSTM cell (ops_lstm.cpp) ----
// gates (B, 4H) = x·W_ih + h_prev·W_hh + b in PyTorch order (i, f, g, o); c_prev (B, H).
// c = σ(f)⊙c_prev + σ(i)⊙tanh(g),  h = σ(o)⊙tanh(c).  Returns {h, c}.
template <class T> std::pair<Var<T>, Var<T>> lstm_cell(Var<T> gates, Var<T> c_prev);

// ---- attention output layers (ops_output.cpp) ----
// out[r] = log_softmax(x W + b)[r, y_r] for x (..., H), W (H, V), b (V): fused and chunked over rows. `automatic`
// keeps the exponentials of as many whole chunks as fit the logits cache (set_logits_cache_mb, default 32; all rows
// when they fit) and recomputes the logits of the other chunks in backward, so memory is O(rows + cache + chunk·V)
// instead of O(rows·V) (see tensor/kernels_output.hpp). All give the same bits; each kept chunk saves one GEMM.
enum class OutputLogits { automatic, keep, recompute };
constexpr int64_t kDefaultLogitsCacheMb = 32;  // soft attention's 640 × 10,000 logits fit; ¼ of PyTorch's memory
void set_logits_cache_mb(int64_t mb);  // process-wide, like the thread count (`--logits-cache-mb`)
void set_logits_cache_bytes(int64_t bytes);  // the same in bytes (tests)
template <class T>
Var<T> linear_log_softmax_pick(Var<T> x, Var<T> W, Var<T> b, const int32_t* y,
                               OutputLogits mode = OutputLogits::automatic);
// The scalar objective of the enumerated attention variants over rows x (..., S, H) grouped S to a query n,
// lw (..., S), labels y and constant weights c (one per query, e.g. the token mask):
//   logf[n, s] = log_softmax(x W + b)[(n, s), y_n],   J = Σ_n c_n Φ_n,
//   marginal: Φ_n = log Σ_s exp(lw + logf)[n, s];   expected: Φ_n = Σ_s exp(lw[n, s]) · logf[n, s].
// Being a scalar, its gradient is formed in the forward pass with each chunk of logits (3 GEMMs, no logits kept or
// recomputed; tensor/kernels_output_objective.hpp); the backward pass scales it. per_query (N), if not null,
// receives Φ_n.
enum class EnumeratedObjective { marginal, expected };
template <class T>
Var<T> enumerated_output_objective(Var<T> x, Var<T> W, Var<T> b, Var<T> lw, const int32_t* y, const T* c,
                                   EnumeratedObjective kind, T* per_query = nullptr);
// The output objectives of sparse attention, evaluated on the support of the weights only. x (..., S, H) rows, one
// per (query n, position s), W (H, V), b (V), weights (..., S) ≥ 0 (sparsemax or entmax output), labels y (N),
// constant weights c (N), log f[n, s] = log_softmax(x W + b)[(n, s), y_n]:
//   support_marginal_objective: Φ_n = log Σ_{s: p_ns > 0} p_ns exp(log f[n, s])   (exact: p is 0 elsewhere)
//   support_elbo_objective:     Φ_n = Σ_{s: q_ns > 0} q_ns (log f[n, s] − log q_ns + log_p[n, s])
//                               (E_q[log f] − KL(q‖p), finite when log_p is, e.g. a log-softmax prior)
//   J = Σ_{n: c_n ≠ 0} c_n Φ_n (a scalar), per_query (N) receives Φ and support (N) the support sizes |S_n|.
// Only the M = Σ_n |S_n| support rows are gathered and go through linear_log_softmax_pick (1 GEMM forward, 2 or 3
// backward, over M rows), so the output layer costs M/(N·S) of enumerated_output_objective's. The gradient to the
// weights is formed on the support only (0 elsewhere): it is exact for every perturbation that keeps the support,
// which is all the sparse normalisers' backward passes on (they are zero off the support).
template <class T>
Var<T> support_marginal_objective(Var<T> x, Var<T> W, Var<T> b, Var<T> p, const int32_t* y, const T* c,
                                  T* per_query = nullptr, int32_t* support = nullptr);
template <class T>
Var<T> support_elbo_objective(Var<T> x, Var<T> W, Var<T> b, Var<T> q, Var<T> log_p, const int32_t* y, const T* c,
                              T* per_query = nullptr, int32_t* support = nullptr);
#if LAVA_PROFILE
// Wall time and GEMM work (2·M·N·K) spent in linear_log_softmax_pick and enumerated_output_objective, forward and
// backward, since the process started: `lava bench train` reports the output layer's own GFLOP/s from the change
// over its timed steps. Profiling builds only (core/op_profile.hpp).
struct OpWork {
  double seconds = 0, flops = 0;
};
OpWork output_layer_work();
#endif
// y[b, t, s, :] = a[b, t, :] + u[b, s, :] for a (B, T, H), u (B, S, H): every (query, source position) pair.
template <class T> Var<T> pair_add(Var<T> a, Var<T> u);

// ---- fused additive attention scorer (ops_attention_score.cpp) ----
// s[b, t, i] = Σ_a v[a] · tanh(q[b, t, a] + k[b, i, a]) for q (B, T, A), k (B, S, A), v (A elements): the scores
// of pair_add → tanh → matmul(·, v) in one pass, without storing the pairwise sum (tensor/kernels_attention_score.hpp).
template <class T> Var<T> mlp_attention_scores(Var<T> q, Var<T> k, Var<T> v);

// Convenience spellings.
template <class T> Var<T> operator+(Var<T> a, Var<T> b) { return add(a, b); }
template <class T> Var<T> operator-(Var<T> a, Var<T> b) { return sub(a, b); }
template <class T> Var<T> operator*(Var<T> a, Var<T> b) { return mul(a, b); }
template <class T> Var<T> operator/(Var<T> a, Var<T> b) { return div(a, b); }
template <class T> Var<T> operator-(Var<T> a) { return affine(a, T(-1), T(0)); }

}  // namespace lava
