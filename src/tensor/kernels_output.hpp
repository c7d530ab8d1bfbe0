#pragma once
// Fused output layer: a linear map to V logits, log-softmax, and the log-probability of one label per row,
//   out[r] = (x W + b)[r, y_r] − logsumexp_v (x W + b)[r, v]
// computed in chunks of kChunkRows rows. The forward pass leaves e[r, v] = exp(l[r, v] − m_r) (m_r = max_v l[r, v])
// in the logits buffer; the backward pass needs the softmax p[r, v] = e[r, v] · exp(m_r − lse_r):
//   dlogits[r, v] = dout[r] · (1[v = y_r] − p[r, v])
//   dx += dlogits Wᵀ,   dW += xᵀ dlogits,   db += Σ_r dlogits[r, :]
// The chunks of the first `kept` rows (a multiple of kChunkRows, or R) keep e in the logits buffer and the backward
// pass reads it: all of them when R·V fits the caller's budget (by default the soft-attention case, R = B·T), as
// many as fit otherwise (the enumerated layer, R = B·T·S rows). Each later chunk goes through one shared chunk
// buffer, and the backward pass recomputes its logits, bit for bit the same GEMM, and e = exp(l − m_r) from the
// stored m_r: one extra GEMM instead of rows·V stored floats, and the same bits.
// Buffers: x, dx (R, H); W, dW (H, V); b, db (V); y, out, lse, row_max, dout (R);
//          logits: scratch (kept + (kept < R ? kChunkRows : 0), V);  W, W_t: W and Wᵀ packed (gemm.hpp PackedB).
// Chunks run in order and each GEMM is deterministic, so results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gemm/gemm.hpp"
#include "tensor/kernels_reduce.hpp"
#include "core/parallel.hpp"
#include "core/vec_math.hpp"

namespace lava::kernels {

constexpr int64_t kChunkRows = 256;

// logits = x W for one chunk of rows, W packed once for all chunks (the bias is added row by row by the caller,
// while the row is in cache).
template <class T>
void output_chunk_logits(T* logits, const T* x, const PackedB<T>& W, int64_t rows, int64_t H, int64_t V) {
  gemm<T>(false, int(rows), T(1), x, int(H), W, T(0), logits, int(V));
}

// One row of V logits: l += b, then m = max l, lse = m + log Σ exp(l − m); returns the label's log-probability.
// When keep_e, leaves e[v] = exp(l[v] − m) in l for the backward pass (else l keeps the logits).
template <class T>
inline T row_log_softmax_pick(T* l, const T* b, int64_t V, int32_t y, T& m, T& lse, bool keep_e) {
  m = vmath::add_then_max(l, b, V);
  const T picked = l[y];
  lse = m + std::log(vmath::sum_exp_shifted(keep_e ? l : nullptr, l, m, V));
  return picked - lse;
}

// One row of e = exp(l − m) (row_log_softmax_pick with keep_e) -> dlogits = g · (1[v = y] − p) in place, with
// p = e · exp(m − lse).
template <class T>
inline void row_softmax_grad_from_e(T* l, int64_t V, int32_t y, T g, T m, T lse) {
  const T scale = -g * std::exp(m - lse);
  for (int64_t v = 0; v < V; ++v) l[v] *= scale;
  l[y] += g;
}

template <class T>
void linear_log_softmax_pick_forward(T* out, T* lse, T* row_max, T* logits, const T* x, const PackedB<T>& W,
                                     const T* b, const int32_t* y, int64_t R, int64_t H, int64_t V, int64_t kept) {
  for (int64_t r0 = 0; r0 < R; r0 += kChunkRows) {
    const int64_t rows = R - r0 < kChunkRows ? R - r0 : kChunkRows;
    const bool keep = r0 < kept;
    T* chunk = logits + (keep ? r0 : kept) * V;
    output_chunk_logits(chunk, x + r0 * H, W, rows, H, V);
#pragma omp parallel for schedule(static) if (rows * V >= kParallelMin)
    for (int64_t r = 0; r < rows; ++r)
      out[r0 + r] = row_log_softmax_pick(chunk + r * V, b, V, y[r0 + r], row_max[r0 + r], lse[r0 + r], keep);
  }
}

// The chain rule through logits = x W + b for one chunk of gradient rows:
//   dx = dx_beta · dx + dlogits Wᵀ,   dW += xᵀ dlogits,   db += Σ_r dlogits[r, :]
// When db directly follows dW in memory, [dW; db] is one (H+1, V) matrix and db its last row:
//   [dW; db] += [x 1]ᵀ dlogits,
// one GEMM with one more row of output (in the last, partial row panel of the kernel) instead of a second pass over
// dlogits, which is larger than any cache. Callers lay the two out so (a Linear declares W and b together, and the
// parameter store keeps their gradients in declaration order) and pass x1, room for [x 1].
// With dx too, dx and [dW; db] are one gemm_pair: dx splits its 8 strips (H = 256) into fixed halves over K = V,
// and a thread that finishes its half first takes more of [dW; db]'s shared strip groups instead of waiting.
// dlogits: (rows, V); x, dx: (rows, H); x1: (rows, H + 1) scratch or null; W_t: Wᵀ packed;
// dx, dW, db may each be null (no gradient wanted).
template <class T>
void add_linear_grads(T* dx, T dx_beta, T* dW, T* db, const T* dlogits, const T* x, T* x1, const PackedB<T>& W_t,
                      int64_t rows, int64_t H, int64_t V) {
  const GemmArgs<T> dx_args{.M = int(rows), .A = dlogits, .lda = int(V), .beta = dx_beta, .C = dx, .ldc = int(H),
                            .packed = &W_t};
  if (dW && db && db == dW + H * V && x1) {
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(x + r * H, x + r * H + H, x1 + r * (H + 1));
      x1[r * (H + 1) + H] = T(1);
    }
    const GemmArgs<T> dwb_args{.trans_a = true, .M = int(H + 1), .N = int(V), .K = int(rows), .A = x1,
                               .lda = int(H + 1), .B = dlogits, .ldb = int(V), .beta = T(1), .C = dW, .ldc = int(V)};
    if (dx) {
      gemm_pair(dx_args, dwb_args);
    } else {
      gemm(dwb_args);
    }
    return;
  }
  if (dx) gemm(dx_args);
  if (dW) gemm<T>(true, false, int(H), int(V), int(rows), T(1), x, int(H), dlogits, int(V), T(1), dW, int(V));
  if (db) add_column_sums_of(db, rows, V, [dlogits, V](int64_t r, int64_t v) { return dlogits[r * V + v]; });
}

// dx, dW, db may each be null (that input needs no gradient); x1: (kChunkRows, H + 1) scratch (add_linear_grads).
// W: packed for x W (the recomputed logits); W_t: Wᵀ, packed here for dx += dlogits Wᵀ when dx is wanted (else
// W_t.packed may be null). Packed once per pass, not in every chunk's GEMM (W is the large operand, and Wᵀ's pack
// is a transpose).
template <class T>
void linear_log_softmax_pick_backward(T* dx, T* dW, T* db, T* logits, const PackedB<T>& W, const PackedB<T>& W_t,
                                      const T* dout, const T* lse, const T* row_max, const T* x, T* x1, const T* b,
                                      const int32_t* y, int64_t R, int64_t H, int64_t V, int64_t kept) {
  if (dx) gemm_pack_b(W_t);
  for (int64_t r0 = 0; r0 < R; r0 += kChunkRows) {
    const int64_t rows = R - r0 < kChunkRows ? R - r0 : kChunkRows;
    const bool keep = r0 < kept;
    T* chunk = logits + (keep ? r0 : kept) * V;
    if (!keep) output_chunk_logits(chunk, x + r0 * H, W, rows, H, V);
#pragma omp parallel for schedule(static) if (rows * V >= kParallelMin)
    for (int64_t r = 0; r < rows; ++r) {  // chunk -> dlogits in place: −g · p[r, v], then + g at the label
      T* l = chunk + r * V;
      const T g = dout[r0 + r], m = row_max[r0 + r];
      if (keep) {  // l holds e
        row_softmax_grad_from_e(l, V, y[r0 + r], g, m, lse[r0 + r]);
      } else {  // l holds the recomputed x W: the forward pass's logits and e, then the same product
        for (int64_t v = 0; v < V; ++v) l[v] += b[v];
        vmath::scaled_exp_shifted(l, l, m, -g * std::exp(m - lse[r0 + r]), V);  // p = e · exp(m − lse)
        l[y[r0 + r]] += g;
      }
    }
    add_linear_grads(dx ? dx + r0 * H : nullptr, T(1), dW, db, chunk, x + r0 * H, x1, W_t, rows, H, V);
  }
}

// y[b, t, s, :] = a[b, t, :] + u[b, s, :]        a: (B, T, H), u: (B, S, H), y: (B, T, S, H)
// da[b, t, :] += Σ_s dy[b, t, s, :]              du[b, s, :] += Σ_t dy[b, t, s, :]
template <class T>
void pair_add_forward(T* y, const T* a, const T* u, int64_t B, int64_t Tn, int64_t S, int64_t H) {
#pragma omp parallel for collapse(2) schedule(static) if (B * Tn * S * H >= kParallelMin)
  for (int64_t bb = 0; bb < B; ++bb)
    for (int64_t t = 0; t < Tn; ++t)
      for (int64_t s = 0; s < S; ++s) {
        T* yo = y + ((bb * Tn + t) * S + s) * H;
        const T* ao = a + (bb * Tn + t) * H;
        const T* uo = u + (bb * S + s) * H;
        for (int64_t h = 0; h < H; ++h) yo[h] = ao[h] + uo[h];
      }
}
template <class T>
void pair_add_backward(T* da, T* du, const T* dy, int64_t B, int64_t Tn, int64_t S, int64_t H) {
  if (da) {
#pragma omp parallel for collapse(2) schedule(static) if (B * Tn * S * H >= kParallelMin)
    for (int64_t bb = 0; bb < B; ++bb)
      for (int64_t t = 0; t < Tn; ++t)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t h = 0; h < H; ++h) da[(bb * Tn + t) * H + h] += dy[((bb * Tn + t) * S + s) * H + h];
  }
  if (du) {
#pragma omp parallel for collapse(2) schedule(static) if (B * Tn * S * H >= kParallelMin)
    for (int64_t bb = 0; bb < B; ++bb)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t t = 0; t < Tn; ++t)
          for (int64_t h = 0; h < H; ++h) du[(bb * S + s) * H + h] += dy[((bb * Tn + t) * S + s) * H + h];
  }
}

}  // namespace lava::kernels
