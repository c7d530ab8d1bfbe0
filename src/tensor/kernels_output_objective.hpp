#pragma once
// Enumerated output objective: the scalar training objective of the enumerated attention variants, with its
// gradient formed in the forward pass while each chunk's logits are still in cache.
//   logf[n, s] = log_softmax(x W + b)[(n, s), y_n]                      (one output layer per query n, position s)
//   marginal:  Φ_n = log Σ_s exp(lw[n, s] + logf[n, s])                 (log p(y|x) = log Σ_s p_s f_s)
//   expected:  Φ_n = Σ_s exp(lw[n, s]) · logf[n, s]                     (E_r[log f], r = q or p)
//   J = Σ_n c_n Φ_n
// Why: J is a scalar, so dJ/d(inputs) is one vector that needs no upstream gradient; computing it here lets the
// backward pass just scale it by dJ. Each chunk's logits are then used once, in cache: 3 GEMMs per row (x W,
// dlogits Wᵀ, xᵀ dlogits) and no logits stored for backward or recomputed there (linear_log_softmax_pick followed by
// the same reduction does 4 GEMMs or keeps rows·V floats).
// Gradients, with a[n, s] = dJ/dlogf[n, s]:
//   marginal: a = c_n · π_s, π = softmax_s(lw + logf) (the exact posterior);   dJ/dlw = c_n · π_s
//   expected: a = c_n · exp(lw_s);                                              dJ/dlw = c_n · exp(lw_s) · logf_s
//   dlogits[(n, s), v] = a[n, s] · (1[v = y_n] − p[(n, s), v]),
//   dx = dlogits Wᵀ,  dW = xᵀ dlogits,  db = Σ_rows dlogits
// Chunks hold whole queries (⌊kChunkRows / S⌋ of them, at least one), so Φ_n and π are complete when a chunk's
// logits are; chunks run in order and every GEMM is deterministic, so results do not depend on the thread count.
// Buffers: x, dx (N·S, H); W, dW (H, V); b, db (V); y, c, phi (N); lw, dlw (N, S); chunk: scratch (rows, V) with
//          rows = max(1, ⌊kChunkRows / S⌋) · S;  W, W_t: W and Wᵀ packed (gemm.hpp PackedB).
// dx, dW, db, dlw may each be null (no gradient wanted; all null: only phi). dx, dW, db, dlw are written, not added.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <omp.h>

#include "tensor/kernels_output.hpp"

namespace lava::kernels {

// Rows per chunk of the enumerated objective: whole groups of S rows, about kChunkRows of them.
inline int64_t enumerated_chunk_rows(int64_t S) { return std::max<int64_t>(1, kChunkRows / S) * S; }

// Φ_n (marginal, else expected) and the row weights a[s] = dJ/dlogf[n, s] / c_n (and dlw / c_n) of one query from
// its S log f values, in double: Φ is a sum over positions that the caller reports, and π needs Φ to full precision.
template <class T>
double query_objective(const T* lw, const T* logf, int64_t S, bool marginal, double* a, double* dlw) {
  if (!marginal) {
    double phi = 0;
    for (int64_t s = 0; s < S; ++s) {
      const double w = std::exp(double(lw[s]));
      phi += w * double(logf[s]);
      a[s] = w, dlw[s] = w * double(logf[s]);
    }
    return phi;
  }
  double m = -INFINITY;
  for (int64_t s = 0; s < S; ++s) m = std::max(m, double(lw[s]) + double(logf[s]));
  double z = 0;
  for (int64_t s = 0; s < S; ++s) z += std::exp(double(lw[s]) + double(logf[s]) - m);
  const double phi = m + std::log(z);
  for (int64_t s = 0; s < S; ++s) a[s] = dlw[s] = std::exp(double(lw[s]) + double(logf[s]) - phi);
  return phi;
}

template <class T>
void enumerated_output_objective_forward(T* phi, T* dx, T* dW, T* db, T* dlw, T* chunk, const T* x, T* x1,
                                         const PackedB<T>& W, const PackedB<T>& W_t, const T* b, const T* lw,
                                         const int32_t* y, const T* c, int64_t N, int64_t S, int64_t H, int64_t V,
                                         bool marginal) {
  const bool grad = dx || dW || db || dlw;
  if (dx) gemm_pack_b(W_t);
  if (dW) std::memset(dW, 0, sizeof(T) * size_t(H * V));
  if (db) std::memset(db, 0, sizeof(T) * size_t(V));
  const int64_t chunk_rows = enumerated_chunk_rows(S);
  const size_t rows_max = size_t(chunk_rows);
  std::vector<T> logf(rows_max), row_max(rows_max), lse(rows_max), a(rows_max);
  std::vector<double> a_query(rows_max), dlw_query(rows_max);  // S entries per query, at the query's rows
  for (int64_t r0 = 0; r0 < N * S; r0 += chunk_rows) {
    const int64_t rows = std::min(chunk_rows, N * S - r0), n0 = r0 / S, queries = rows / S;
    output_chunk_logits(chunk, x + r0 * H, W, rows, H, V);
    // Row r of the chunk: its log f, max and log-sum-exp (leaving e = exp(l − m) in place when grad).
    const auto forward_row = [&](int64_t r) {
      logf[size_t(r)] = row_log_softmax_pick(chunk + r * V, b, V, y[n0 + r / S], row_max[size_t(r)],
                                             lse[size_t(r)], grad);
    };
    // Query n of the chunk: Φ_n and its rows' weights, from its S log f values.
    const auto objective = [&](int64_t n) {
      const size_t q0 = size_t((n - n0) * S);
      phi[n] = T(query_objective(lw + n * S, logf.data() + q0, S, marginal, a_query.data() + q0,
                                 dlw_query.data() + q0));
      for (int64_t s = 0; s < S; ++s) {
        a[q0 + size_t(s)] = T(double(c[n]) * a_query[q0 + size_t(s)]);
        if (dlw) dlw[n * S + s] = T(double(c[n]) * dlw_query[q0 + size_t(s)]);
      }
    };
    const auto grad_row = [&](int64_t r) {
      row_softmax_grad_from_e(chunk + r * V, V, y[n0 + r / S], a[size_t(r)], row_max[size_t(r)], lse[size_t(r)]);
    };
    const bool parallel = rows * V >= kParallelMin;
    if (queries >= 4 * int64_t(omp_get_max_threads())) {
      // Query-major: one query's S rows (S·V floats, 800 KB at S = 20 and V = 10,000) are still in L2 when their
      // gradient rows are formed, so the chunk (larger than L2) is swept from L3 once instead of twice.
      // Queries go out one at a time (dynamic): this VM's two vCPUs often run at different speeds, and with fixed
      // halves the faster one waits for the slower at the join. Each query writes only its own rows, so the bits
      // do not depend on which thread ran it.
#pragma omp parallel for schedule(dynamic) if (parallel)
      for (int64_t n = n0; n < n0 + queries; ++n) {
        const int64_t q0 = (n - n0) * S;
        for (int64_t r = q0; r < q0 + S; ++r) forward_row(r);
        objective(n);
        if (grad)
          for (int64_t r = q0; r < q0 + S; ++r) grad_row(r);
      }
    } else {  // too few queries to share out: split the rows instead, in two passes around the objectives
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t r = 0; r < rows; ++r) forward_row(r);
      for (int64_t n = n0; n < n0 + queries; ++n) objective(n);
      if (grad) {
#pragma omp parallel for schedule(static) if (parallel)
        for (int64_t r = 0; r < rows; ++r) grad_row(r);
      }
    }
    if (!grad) continue;
    add_linear_grads(dx ? dx + r0 * H : nullptr, T(0), dW, db, chunk, x + r0 * H, x1, W_t, rows, H, V);  // dx written
  }
}

}  // namespace lava::kernels
