#include "tensor/kernels_mixture.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/check.hpp"
#include "gemm/gemm.hpp"
#include "tensor/parallel.hpp"

namespace lava {

namespace {

// e^x for x ≤ 0 without a libm call or a floating-point compare, so that loops over it vectorise (GCC does not
// if-convert compares under the default -ftrapping-math): x = n ln2 + r (Cody-Waite, |r| ≤ ln2/2, n rounded by the
// 1.5·2^23 trick), e^r by Cephes' degree-6 expf polynomial (relative error about 1e-7), 2^n from the exponent bits.
// Arguments below −87.3 are clamped there (by an unsigned compare of the bits, monotone for negative floats), so
// the result is then about 1e-38 instead of smaller: callers treat sums that small as lost (see kTiny).
inline float exp_nonpositive(float x) {
  constexpr uint32_t kFloorBits = std::bit_cast<uint32_t>(-87.3f);
  const float xc = std::bit_cast<float>(std::min(std::bit_cast<uint32_t>(x), kFloorBits));
  const float n = (xc * 1.44269504088896341f + 12582912.f) - 12582912.f;
  const float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.f;
  return y * std::bit_cast<float>((int32_t(n) + 127) << 23);
}

}  // namespace

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
#pragma omp simd reduction(+ : z)
      for (int64_t v = 0; v < V; ++v) z += exp_nonpositive(l[v] - m);
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
      float acc[kBlock] = {};
      for (int64_t r = a; r < e; ++r) {
        const float* l = logits + r * V + v0;
        const float w = row_w[size_t(r)], m = row_max[size_t(r)];
#pragma omp simd
        for (int64_t v = 0; v < n; ++v) acc[v] += w * exp_nonpositive(l[v] - m);
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
