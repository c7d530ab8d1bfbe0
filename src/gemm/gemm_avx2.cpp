// AVX2 + FMA float GEMM: the generic packed driver (gemm_packed.hpp) with a 6×16 ymm micro-kernel
// (12 accumulators + 2 B vectors + 1 broadcast = 15 of the 16 ymm registers).
#include "gemm/gemm_kernels.hpp"

#if LAVA_GEMM_HAVE_X86
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "gemm/gemm_view.hpp"

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define LAVA_GEMM_ISA_TU 1
#include "gemm/gemm_packed.hpp"
#include "gemm/ukernel_simd.hpp"
#include "gemm/x86_transpose.hpp"

namespace lava::gemm_detail {
namespace {

// 8 float lanes in a ymm register.
struct Ymm : X86Transpose {
  using scalar = float;
  using reg = __m256;
  using mask = __m256i;
  static constexpr int W = 8;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(float x) { return _mm256_set1_ps(x); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static void store(float* p, reg x) { _mm256_storeu_ps(p, x); }
  // lanes [0, n) on, n in [0, W]
  static mask make_mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static reg load_masked(const float* p, mask m) { return _mm256_maskload_ps(p, m); }
  static void store_masked(float* p, mask m, reg x) { _mm256_maskstore_ps(p, m, x); }
};

using KernelAvx2 = SimdKernel<Ymm, 6, 2>;

// kc·16·4 bytes of B̂ strip + 6·kc·4 of Â panel in L1 (kc = 384: 24 + 9 KiB, sized for a 48 KiB L1d such as Zen 5's);
// Â blocks of ≤ 24 panels (144 rows, 216 KiB) run strip-major. mc and nc were chosen by alternating builds under
// `lava bench gemm`, not derived: a B̂ block of kc×960 (1.4 MiB, past L2: the strips stream from L3 well enough) and
// an Â block of up to 4096 rows (6 MiB per thread, so B is packed once per k block for M ≤ 4096, where 768-row blocks
// would pack it ⌈4096/768⌉ = 6 times) beat 768 rows × 480 columns.
constexpr PackedBlocking kBlockingAvx2{/*kc_max=*/384, /*mc=*/4096, /*nc=*/960, /*few_a_panels=*/24,
                                       /*strip_group=*/8};

}  // namespace

void sgemm_avx2(const GemmView<float>& v, bool parallel) { gemm_packed<KernelAvx2>(v, kBlockingAvx2, parallel); }
void sgemm_avx2_pair(const GemmView<float>& v1, const GemmView<float>& v2, bool parallel) {
  gemm_packed_pair<KernelAvx2>(v1, v2, kBlockingAvx2, parallel);
}
double sgemm_avx2_kernel_loop(long calls, float* scratch) { return kernel_loop<KernelAvx2>(calls, scratch); }

}  // namespace lava::gemm_detail

#pragma GCC pop_options
#endif
