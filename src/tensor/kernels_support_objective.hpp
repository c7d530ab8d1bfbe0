#pragma once
// The per-query reductions of the output objectives over the support of a sparse distribution over positions.
// Positions with weight 0 contribute nothing to either objective, so the output layer is evaluated only at the
// support rows, gathered in order into M = Σ_n |S_n| rows; `row_begin` marks each query's block of them.
//   marginal: Φ_n = log Σ_{k∈S_n} w_k · exp(logf_k)                   (log p(y|x) = log Σ_{i∈supp p} p_i f_i)
//   elbo:     Φ_n = Σ_{k∈S_n} q_k (logf_k − log q_k + lp_k)            (E_q[log f] − KL(q‖p) over supp q)
//   J = Σ_n c_n Φ_n, summed over the queries with c_n ≠ 0 (a padded query with an empty support stays out of J).
// Buffers: w, dw, lp, dlp (N, S) (query n's weights at n·S + s); idx (M), the flat index n·S + s of each support
//          row; row_begin (N + 1); logf, dlogf (M); c, phi (N). Sums run in double in a fixed order (deterministic).
#include <cmath>
#include <cstdint>
#include <vector>

namespace lava::kernels {

// The support rows of w (N, S): idx gets the flat indices with w > 0 in increasing order, row_begin the offsets of
// each query's rows. Returns M.
template <class T>
int64_t support_rows(std::vector<int32_t>& idx, std::vector<int64_t>& row_begin, const T* w, int64_t N, int64_t S) {
  idx.clear();
  row_begin.assign(size_t(N + 1), 0);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t s = 0; s < S; ++s)
      if (w[n * S + s] > T(0)) idx.push_back(int32_t(n * S + s));
    row_begin[size_t(n + 1)] = int64_t(idx.size());
  }
  return int64_t(idx.size());
}

// Φ_n = log Σ_k w_k e^{logf_k}, from the largest log-term down, so that no term overflows or underflows alone.
template <class T>
void support_marginal_forward(T* phi, const T* logf, const T* w, const int32_t* idx, const int64_t* row_begin,
                              int64_t N) {
  for (int64_t n = 0; n < N; ++n) {
    double m = -INFINITY, z = 0;
    for (int64_t k = row_begin[n]; k < row_begin[n + 1]; ++k)
      m = std::max(m, std::log(double(w[idx[k]])) + double(logf[k]));
    for (int64_t k = row_begin[n]; k < row_begin[n + 1]; ++k)
      z += std::exp(std::log(double(w[idx[k]])) + double(logf[k]) - m);
    phi[n] = std::isinf(m) ? T(m) : T(m + std::log(z));
  }
}

// dΦ_n/dlogf_k = π_k = w_k f_k / Σ_j w_j f_j (the posterior over the support), and dΦ_n/dw_k = f_k / Σ_j w_j f_j.
// The weights' gradient is given on the support only: off it the output layer was never evaluated (and sparsemax
// and entmax pass no gradient back from there).  dlogf += g c_n π_k, dw += g c_n π_k / w_k.
template <class T>
void support_marginal_backward(T* dlogf, T* dw, const T* phi, const T* logf, const T* w, const int32_t* idx,
                               const int64_t* row_begin, const T* c, T g, int64_t N) {
  for (int64_t n = 0; n < N; ++n) {
    if (c[n] == T(0)) continue;
    const double scale = double(g) * double(c[n]);
    for (int64_t k = row_begin[n]; k < row_begin[n + 1]; ++k) {
      const double f_over_z = std::exp(double(logf[k]) - double(phi[n]));
      if (dlogf) dlogf[k] += T(scale * double(w[idx[k]]) * f_over_z);
      if (dw) dw[idx[k]] += T(scale * f_over_z);
    }
  }
}

// Φ_n = Σ_k q_k (logf_k − log q_k + lp_k); finite wherever lp is, since q_k > 0 on the support.
template <class T>
void support_elbo_forward(T* phi, const T* logf, const T* q, const T* lp, const int32_t* idx,
                          const int64_t* row_begin, int64_t N) {
  for (int64_t n = 0; n < N; ++n) {
    double sum = 0;
    for (int64_t k = row_begin[n]; k < row_begin[n + 1]; ++k) {
      const double qk = double(q[idx[k]]);
      sum += qk * (double(logf[k]) - std::log(qk) + double(lp[idx[k]]));
    }
    phi[n] = T(sum);
  }
}

// dΦ/dlogf_k = q_k,  dΦ/dlp_k = q_k,  dΦ/dq_k = logf_k − log q_k − 1 + lp_k (on the support only, as above).
template <class T>
void support_elbo_backward(T* dlogf, T* dq, T* dlp, const T* logf, const T* q, const T* lp, const int32_t* idx,
                           const int64_t* row_begin, const T* c, T g, int64_t N) {
  for (int64_t n = 0; n < N; ++n) {
    if (c[n] == T(0)) continue;
    const double scale = double(g) * double(c[n]);
    for (int64_t k = row_begin[n]; k < row_begin[n + 1]; ++k) {
      const double qk = double(q[idx[k]]);
      if (dlogf) dlogf[k] += T(scale * qk);
      if (dlp) dlp[idx[k]] += T(scale * qk);
      if (dq) dq[idx[k]] += T(scale * (double(logf[k]) - std::log(qk) - 1 + double(lp[idx[k]])));
    }
  }
}

}  // namespace lava::kernels
