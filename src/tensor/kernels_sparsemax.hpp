#pragma once
// Sparse normalisers over the last axis of a (rows, n) score matrix: sparsemax and α-entmax with α = 1.5. Unlike
// softmax they give probability exactly 0 to every position whose score is below a threshold τ, so a later sum
// over positions may skip those positions without approximation.
//   sparsemax(z) = argmin_{p ∈ simplex} ‖p − z‖² = [z − τ]_+                (Σ_i p_i = 1 fixes τ)
//   entmax15(z)  = [z/2 − τ]_+²                                            (Σ_i p_i = 1 fixes τ)
// Both are exact: τ comes from the scores sorted in decreasing order (below), not from an iterative search.
// Excluded positions (mask byte 1, or a score of −inf) never enter the support and get p = 0 exactly; a row with
// every position excluded is all zeros (support 0). Masking by a very negative finite score also works, since the
// threshold is never more than 1 (sparsemax) or 2 (entmax15) below the row maximum; the mask makes it explicit.
// τ is found in double after subtracting the row maximum (both maps are invariant to a shift of the row), so it
// does not lose the small differences between scores to a large common offset. Every row is reduced by one thread
// in index order, so the results do not depend on the thread count.
// Buffers: x, y, dx, dy are (rows, n); mask is (rows, n) or null; support is (rows) or null.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/parallel.hpp"

namespace lava::kernels {

enum class SparseMap { sparsemax, entmax15 };

// The candidate scores of row x (not masked, not −inf) minus their maximum, times `scale`, sorted in decreasing
// order into u; returns the row maximum (−inf when no candidate is left, u then empty).
template <class T>
double sorted_candidates(const T* x, const uint8_t* mask, int64_t n, double scale, std::vector<double>& u) {
  u.clear();
  double m = -INFINITY;
  for (int64_t i = 0; i < n; ++i)
    if (!(mask && mask[i]) && !std::isinf(x[i])) m = std::max(m, double(x[i]));
  for (int64_t i = 0; i < n; ++i)
    if (!(mask && mask[i]) && !std::isinf(x[i])) u.push_back(scale * (double(x[i]) - m));
  std::sort(u.begin(), u.end(), std::greater<double>());
  return m;
}

// sparsemax threshold for u sorted decreasingly: the support is the first k* entries,
//   k* = max{k : 1 + k·u_k > Σ_{j≤k} u_j},   τ = (Σ_{j≤k*} u_j − 1) / k*.
// The condition holds for k = 1 and, once it fails, for no larger k, so the loop stops there.
inline double sparsemax_threshold(const std::vector<double>& u) {
  double sum = 0, tau = 0;
  for (size_t k = 1; k <= u.size(); ++k) {
    sum += u[k - 1];
    if (1 + double(k) * u[k - 1] <= sum) break;
    tau = (sum - 1) / double(k);
  }
  return tau;
}

// 1.5-entmax threshold for u = z/2 sorted decreasingly. If the support is the first k entries, Σ_{j≤k} (u_j − τ)² = 1
// is a quadratic in τ whose smaller root is
//   τ_k = mean_k − sqrt(max(δ_k, 0)),  δ_k = (1 − ss_k) / k,  ss_k = Σ_{j≤k} (u_j − mean_k)² = k (msq_k − mean_k²),
// with mean_k and msq_k the mean of u_j and of u_j² over j ≤ k. The true support size k* is the number of k with
// τ_k ≤ u_k, and τ = τ_{k*}.
inline double entmax15_threshold(const std::vector<double>& u) {
  const auto tau_at = [&u](size_t k, double sum, double sum_sq) {
    const double mean = sum / double(k), msq = sum_sq / double(k);
    const double ss = double(k) * (msq - mean * mean), delta = (1 - ss) / double(k);
    return mean - std::sqrt(std::max(delta, 0.0));
  };
  double sum = 0, sum_sq = 0;
  size_t support = 0;
  for (size_t k = 1; k <= u.size(); ++k) {
    sum += u[k - 1], sum_sq += u[k - 1] * u[k - 1];
    if (tau_at(k, sum, sum_sq) <= u[k - 1]) ++support;
  }
  sum = sum_sq = 0;  // τ_{k*}, from the same sums in the same order
  for (size_t k = 1; k <= support; ++k) sum += u[k - 1], sum_sq += u[k - 1] * u[k - 1];
  return support ? tau_at(support, sum, sum_sq) : 0.0;
}

// y = sparsemax(x) or entmax15(x) row by row; support[r] (if not null) = #{i : y[r, i] > 0}.
template <class T>
void sparse_map_forward(T* y, int32_t* support, const T* x, const uint8_t* mask, int64_t rows, int64_t n,
                        SparseMap map) {
  const bool entmax = map == SparseMap::entmax15;
  const double scale = entmax ? 0.5 : 1.0;
#pragma omp parallel if (rows * n >= kParallelMin)
  {
    std::vector<double> u;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * n;
      const uint8_t* mr = mask ? mask + r * n : nullptr;
      const double m = sorted_candidates(xr, mr, n, scale, u);
      const double tau = u.empty() ? 0 : entmax ? entmax15_threshold(u) : sparsemax_threshold(u);
      int32_t count = 0;
      for (int64_t i = 0; i < n; ++i) {
        double p = 0;
        if (!(mr && mr[i]) && !std::isinf(xr[i])) {
          const double d = std::max(scale * (double(xr[i]) - m) - tau, 0.0);
          p = entmax ? d * d : d;
        }
        y[r * n + i] = T(p);
        count += y[r * n + i] > T(0);
      }
      if (support) support[r] = count;
    }
  }
}

// The Jacobians are symmetric, so dx = J dy. With S = supp y:
//   sparsemax: dx_i += [i ∈ S] (dy_i − (1/|S|) Σ_{j∈S} dy_j)
//   entmax15:  dx_i += g_i dy_i − g_i (Σ_j g_j dy_j) / (Σ_j g_j),  g = sqrt(y) (= y^{2−α}, 0 off the support)
// (entmax15: y_i = (z_i/2 − τ)², so dy_i = g_i (dz_i − 2 dτ), and Σ dy = 0 gives 2 dτ = Σ g dz / Σ g.)
template <class T>
void sparse_map_backward(T* dx, const T* y, const T* dy, int64_t rows, int64_t n, SparseMap map) {
  const bool entmax = map == SparseMap::entmax15;
#pragma omp parallel for schedule(static) if (rows * n >= kParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    const T* yr = y + r * n;
    const T* dyr = dy + r * n;
    double weight = 0, dot = 0;  // Σ g and Σ g·dy, with g = [y > 0] for sparsemax
    for (int64_t i = 0; i < n; ++i) {
      if (!(yr[i] > T(0))) continue;
      const double g = entmax ? std::sqrt(double(yr[i])) : 1.0;
      weight += g, dot += g * double(dyr[i]);
    }
    if (weight == 0) continue;  // nothing in the support: no gradient
    const double shift = dot / weight;
    for (int64_t i = 0; i < n; ++i) {
      if (!(yr[i] > T(0))) continue;
      const double g = entmax ? std::sqrt(double(yr[i])) : 1.0;
      dx[r * n + i] += T(g * (double(dyr[i]) - shift));
    }
  }
}

}  // namespace lava::kernels
