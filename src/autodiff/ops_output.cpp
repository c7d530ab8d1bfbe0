// Output-layer ops for attention models: the fused linear + log-softmax + pick (the enumerated output layer, one
// row per (token, source position)), the enumerated variants' scalar objective built on it with its gradient
// formed in the forward pass, and the pairwise broadcast sum that builds those rows.
#include <atomic>
#include <chrono>
#include <cstring>

#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "gemm/gemm.hpp"
#include "tensor/kernels_output.hpp"
#include "tensor/kernels_output_objective.hpp"

namespace lava {

namespace {
std::atomic<int64_t> g_logits_cache_bytes{kDefaultLogitsCacheMb << 20};
}  // namespace

void set_logits_cache_mb(int64_t mb) { set_logits_cache_bytes(mb << 20); }
void set_logits_cache_bytes(int64_t bytes) { g_logits_cache_bytes.store(bytes, std::memory_order_relaxed); }

namespace {
#if LAVA_PROFILE
std::atomic<uint64_t> g_output_ns{0}, g_output_flops{0};

// Adds the wall time and the GEMM work of its scope to the output-layer totals. The op's GEMMs are called from
// the thread that runs the tape (never from inside a parallel region), so the change in gemm_flop_count() over
// the scope is this op's work alone.
struct OutputLayerMeter {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  unsigned long long flops0 = gemm_flop_count();
  ~OutputLayerMeter() {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    g_output_ns.fetch_add(uint64_t(ns.count()), std::memory_order_relaxed);
    g_output_flops.fetch_add(gemm_flop_count() - flops0, std::memory_order_relaxed);
  }
};
#else
struct OutputLayerMeter {  // the product build measures nothing
  constexpr OutputLayerMeter() {}
};
#endif

// W packed for logits = x W, and Wᵀ's PackedB for dx = dlogits Wᵀ with its scratch reserved (the kernel that forms
// dx packs it; null scratch when dx is not wanted).
template <class T>
std::pair<PackedB<T>, PackedB<T>> pack_output_weight(Tape<T>& tape, Var<T> W, bool want_dx) {
  const int h = int(W.dim(0)), v = int(W.dim(1));
  const PackedB<T> W_packed{false, h, v, W.val(), v, tape.template scratch<T>(gemm_packed_b_size<T>(h, v))};
  gemm_pack_b(W_packed);
  T* W_t_scratch = want_dx ? tape.template scratch<T>(gemm_packed_b_size<T>(v, h)) : nullptr;
  return {W_packed, PackedB<T>{true, v, h, W.val(), v, W_t_scratch}};
}
}  // namespace

#if LAVA_PROFILE
OpWork output_layer_work() {
  return {1e-9 * double(g_output_ns.load(std::memory_order_relaxed)),
          double(g_output_flops.load(std::memory_order_relaxed))};
}
#endif

template <class T>
Var<T> linear_log_softmax_pick(Var<T> x, Var<T> W, Var<T> b, const int32_t* y, OutputLogits mode) {
  LAVA_PROFILE_OP("linear_log_softmax_pick");
  LAVA_CHECK(W.rank() == 2 && b.rank() == 1 && W.dim(1) == b.dim(0) && x.shape().last() == W.dim(0),
             "linear_log_softmax_pick: x {} W {} b {}", x.shape().str(), W.shape().str(), b.shape().str());
  const OutputLayerMeter meter;
  Tape<T>& tape = *x.tape;
  const int64_t H = W.dim(0), V = W.dim(1), R = x.numel() / H;
  for (int64_t r = 0; r < R; ++r) LAVA_CHECK(y[r] >= 0 && y[r] < V, "label {} outside [0, {})", y[r], V);
  Var<T> out = tape.make_output(x.shape().without(-1), x, W, b);
  // Rows whose exponentials are kept for backward: all, none, or the whole chunks that fit the cache.
  const int64_t budget_rows = g_logits_cache_bytes.load(std::memory_order_relaxed) / (V * int64_t(sizeof(T)));
  const int64_t kept = !out.needs_grad() || mode == OutputLogits::recompute ? 0
                       : mode == OutputLogits::keep || budget_rows >= R
                           ? R
                           : budget_rows / kernels::kChunkRows * kernels::kChunkRows;
  T* lse = tape.template scratch<T>(R);
  T* row_max = tape.template scratch<T>(R);
  T* logits = tape.template scratch<T>((kept + (kept < R ? std::min<int64_t>(R - kept, kernels::kChunkRows) : 0)) * V);
  const auto [W_packed, W_t] = pack_output_weight(tape, W, x.needs_grad());
  int32_t* labels = tape.template scratch<int32_t>(R);
  std::memcpy(labels, y, sizeof(int32_t) * size_t(R));
  kernels::linear_log_softmax_pick_forward(out.val(), lse, row_max, logits, x.val(), W_packed, b.val(), labels, R,
                                           H, V, kept);
  if (out.needs_grad()) {
    T* x1 = tape.template scratch<T>(std::min<int64_t>(R, kernels::kChunkRows) * (H + 1));
    tape.on_backward([x, W, b, out, lse, row_max, logits, W_packed, W_t, labels, x1, R, H, V, kept] {
      const OutputLayerMeter meter;
      kernels::linear_log_softmax_pick_backward(x.grad(), W.grad(), b.grad(), logits, W_packed, W_t, out.grad(), lse,
                                                row_max, x.val(), x1, b.val(), labels, R, H, V, kept);
    });
  }
  return out;
}

template <class T>
Var<T> enumerated_output_objective(Var<T> x, Var<T> W, Var<T> b, Var<T> lw, const int32_t* y, const T* c,
                                   EnumeratedObjective kind, T* per_query) {
  LAVA_PROFILE_OP("enumerated_output_objective");
  LAVA_CHECK(W.rank() == 2 && b.rank() == 1 && W.dim(1) == b.dim(0) && x.rank() >= 2 &&
                 x.shape().last() == W.dim(0) && x.shape().without(-1) == lw.shape() && lw.shape().last() >= 1,
             "enumerated_output_objective: x {} W {} b {} lw {}", x.shape().str(), W.shape().str(), b.shape().str(),
             lw.shape().str());
  const OutputLayerMeter meter;
  Tape<T>& tape = *x.tape;
  const int64_t H = W.dim(0), V = W.dim(1), S = lw.shape().last(), N = lw.numel() / S;
  for (int64_t n = 0; n < N; ++n) LAVA_CHECK(y[n] >= 0 && y[n] < V, "label {} outside [0, {})", y[n], V);
  Var<T> out = tape.make_output(Shape{}, x, W, b, lw);
  const bool grad = out.needs_grad();
  const auto [W_packed, W_t] = pack_output_weight(tape, W, grad && x.needs_grad());
  // dJ/d(each input), formed now and scaled by dJ in the backward pass (null where no gradient is wanted).
  T* dx = grad && x.needs_grad() ? tape.template scratch<T>(N * S * H) : nullptr;
  // dW and db in one block, db right after dW, so that the kernel forms both in one GEMM (add_linear_grads).
  T* dWb = grad && (W.needs_grad() || b.needs_grad()) ? tape.template scratch<T>((H + 1) * V) : nullptr;
  T* dW = W.needs_grad() ? dWb : nullptr;
  T* db = b.needs_grad() && dWb ? dWb + H * V : nullptr;
  const int64_t chunk_rows = kernels::enumerated_chunk_rows(S);
  T* x1 = dW && db ? tape.template scratch<T>(chunk_rows * (H + 1)) : nullptr;
  T* dlw = grad && lw.needs_grad() ? tape.template scratch<T>(N * S) : nullptr;
  T* phi = tape.template scratch<T>(N);
  T* chunk = tape.template scratch<T>(chunk_rows * V);
  kernels::enumerated_output_objective_forward(phi, dx, dW, db, dlw, chunk, x.val(), x1, W_packed, W_t, b.val(),
                                               lw.val(), y, c, N, S, H, V, kind == EnumeratedObjective::marginal);
  double J = 0;  // Σ_n c_n Φ_n in increasing n
  for (int64_t n = 0; n < N; ++n) J += double(c[n]) * double(phi[n]);
  out.val()[0] = T(J);
  if (per_query) std::memcpy(per_query, phi, sizeof(T) * size_t(N));
  if (grad)
    tape.on_backward([x, W, b, lw, out, dx, dW, db, dlw, N, S, H, V] {
      const OutputLayerMeter meter;
      const T g = out.grad()[0];
      const auto add_scaled = [g](T* to, const T* d, int64_t n) {
        if (!d) return;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
        for (int64_t i = 0; i < n; ++i) to[i] += g * d[i];
      };
      add_scaled(x.grad(), dx, N * S * H);
      add_scaled(W.grad(), dW, H * V);
      add_scaled(b.grad(), db, V);
      add_scaled(lw.grad(), dlw, N * S);
    });
  return out;
}

template <class T>
Var<T> pair_add(Var<T> a, Var<T> u) {
  LAVA_PROFILE_OP("pair_add");
  LAVA_CHECK(a.rank() == 3 && u.rank() == 3 && a.dim(0) == u.dim(0) && a.dim(2) == u.dim(2),
             "pair_add: a {} and u {}", a.shape().str(), u.shape().str());
  const int64_t B = a.dim(0), Tn = a.dim(1), S = u.dim(1), H = a.dim(2);
  Var<T> y = a.tape->make_output(Shape{B, Tn, S, H}, a, u);
  kernels::pair_add_forward(y.val(), a.val(), u.val(), B, Tn, S, H);
  if (y.needs_grad())
    a.tape->on_backward([a, u, y, B, Tn, S, H] { kernels::pair_add_backward(a.grad(), u.grad(), y.grad(), B, Tn, S, H); });
  return y;
}

#define LAVA_INSTANTIATE(T)                                                            \
  template Var<T> linear_log_softmax_pick(Var<T>, Var<T>, Var<T>, const int32_t*, OutputLogits); \
  template Var<T> pair_add(Var<T>, Var<T>);                                            \
  template Var<T> enumerated_output_objective(Var<T>, Var<T>, Var<T>, Var<T>, const int32_t*, const T*,   \
                                              EnumeratedObjective, T*);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
