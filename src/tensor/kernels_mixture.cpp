#include "tensor/kernels_mixture.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/check.hpp"
#include "gemm/gemm.hpp"
#include "core/parallel.hpp"
#include "core/vec_math.hpp"

namespace lava {

void mixture_log_softmax(float* out, float* logits, const float* o, const float* logw, const int64_t* row_begin,
                         const int32_t* hyps, int64_t nh, const float* W, const float* b, int64_t Hd, int64_t V,
                         int64_t chunk_rows) {
  constexpr float kTiny = 1e-30f;  // below this a linear-space sum may have lost terms to underflow
  std::vector<float> row_max, row_w, shift;  // per chunk row: m_r = max_v l_rv, e^{logw_r} / Z_r, logw_r − lse_r
  for (int64_t k0 = 0; k0 < nh;) {
    int64_t k1 = k0 + 1;
    while (k1 < nh && row_begin[k1 + 1] - row_begin[k0] <= chunk_rows) ++k1;
    const int64_t r0 = row_begin[k0], rows = row_begin[k1] - r0;
    LAVA_CHECK(rows <= chunk_rows, "hypothesis with {} rows, more than the chunk of {}", rows, chunk_rows);
    gemm<float>(false, false, int(rows), int(V), int(Hd), 1.f, o + r0 * Hd, int(Hd), W, int(V), 0.f, logits, int(V));
    row_max.resize(size_t(rows)), row_w.resize(size_t(rows)), shift.resize(size_t(rows));
#pragma omp parallel for schedule(static) if (rows * V >= kParallelMin)
    for (int64_t r = 0; r < rows; ++r) {
      float* l = logits + r * V;
      float m = -INFINITY, z = 0.f;
#pragma omp simd reduction(max : m)
      for (int64_t v = 0; v < V; ++v) {
        l[v] += b[v];
        m = std::max(m, l[v]);
      }
      z = vmath::sum_exp_shifted<float>(nullptr, l, m, V);
      row_max[size_t(r)] = m;
      row_w[size_t(r)] = float(std::exp(double(logw[r0 + r])) / z);
      shift[size_t(r)] = logw[r0 + r] - (m + std::log(z));
    }
    constexpr int64_t kBlock = 256;  // words per work item
    const int64_t nb = (V + kBlock - 1) / kBlock, items = (k1 - k0) * nb;
#pragma omp parallel for schedule(static) if (rows * V >= kParallelMin)
    for (int64_t it = 0; it < items; ++it) {
      const int64_t k = k0 + it / nb, v0 = (it % nb) * kBlock, n = std::min(V, v0 + kBlock) - v0;
      const int64_t a = row_begin[k] - r0, e = row_begin[k + 1] - r0;
      float* y = out + int64_t(hyps[k]) * V + v0;
      if (e - a == 1) {  // one row: a log-softmax
        for (int64_t v = 0; v < n; ++v) y[v] = shift[size_t(a)] + logits[a * V + v0 + v];
        continue;
      }
      float acc[kBlock] = {}, term[kBlock];
      for (int64_t r = a; r < e; ++r) {  // acc += w_r · e^{l_rv − m_r}
        vmath::scaled_exp_shifted(term, logits + r * V + v0, row_max[size_t(r)], row_w[size_t(r)], n);
        for (int64_t v = 0; v < n; ++v) acc[v] += term[v];
      }
      for (int64_t v = 0; v < n; ++v) {
        if (acc[v] >= kTiny) {
          y[v] = std::log(acc[v]);
          continue;
        }
        float mx = -INFINITY;  // the log-space sum: logsumexp_r [logw_r − lse_r + l_rv]
        for (int64_t r = a; r < e; ++r) mx = std::max(mx, shift[size_t(r)] + logits[r * V + v0 + v]);
        double z = 0;
        for (int64_t r = a; r < e; ++r) z += std::exp(double(shift[size_t(r)] + logits[r * V + v0 + v] - mx));
        y[v] = std::isinf(mx) ? mx : mx + float(std::log(z));
      }
    }
    k0 = k1;
  }
}

}  // namespace lava
