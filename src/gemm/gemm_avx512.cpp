// AVX-512 float GEMM: the generic packed driver (gemm_packed.hpp) with a 12×32 zmm micro-kernel
// (24 accumulators + 2 B vectors + 1 broadcast of the 32 zmm registers; BLIS skx's 32×12 kernel, transposed
// for row-major C). Only called when __builtin_cpu_supports("avx512f") (gemm.cpp).
#include "gemm/gemm_kernels.hpp"

#if LAVA_GEMM_HAVE_X86
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "gemm/gemm_view.hpp"

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#define LAVA_GEMM_ISA_TU 1
#include "gemm/gemm_packed.hpp"
#include "gemm/ukernel_simd.hpp"
#include "gemm/x86_transpose.hpp"
#include "gemm/x86_transpose16.hpp"

namespace lava::gemm_detail {
namespace {

// 16 float lanes in a zmm register; edge masks are k registers.
struct Zmm : X86Transpose, X86Transpose16 {
  using scalar = float;
  using reg = __m512;
  using mask = __mmask16;
  static constexpr int W = 16;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg set1(float x) { return _mm512_set1_ps(x); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg bcast(const float* p) { return _mm512_set1_ps(*p); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static void store(float* p, reg x) { _mm512_storeu_ps(p, x); }
  // lanes [0, n) on, n in [0, W]
  static mask make_mask(int n) { return mask((1u << n) - 1u); }
  static reg load_masked(const float* p, mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store_masked(float* p, mask m, reg x) { _mm512_mask_storeu_ps(p, m, x); }
};

using KernelAvx512 = SimdKernel<Zmm, 12, 2>;

// kc = 384: a 12×kc Â micro-panel (18 KiB) stays in L1 while the kernel sweeps a B̂ block of kc×480 (720 KiB) in
// L2; Â blocks of ≤ 16 panels (192 rows, 288 KiB) run strip-major with 4-strip groups. Â blocks of up to 4096 rows
// (6 MiB per thread, in L3), so that a plain call packs each B̂ block once for M ≤ 4096, as on AVX2: with 768-row
// blocks a 1920-row product would pack every B̂ block ⌈1920/768⌉ = 3 times. nc = 1920 would make the B̂ block
// outgrow L2 (kc×1920: 2.8 MiB past a 2 MiB L2), so its strips would stream from L3. The values themselves were
// chosen by alternating builds under `lava bench gemm`.
constexpr PackedBlocking kBlockingAvx512{/*kc_max=*/384, /*mc=*/4096, /*nc=*/480, /*few_a_panels=*/16,
                                         /*strip_group=*/4};

}  // namespace

void sgemm_avx512(const GemmView<float>& v, bool parallel) { gemm_packed<KernelAvx512>(v, kBlockingAvx512, parallel); }
void sgemm_avx512_pair(const GemmView<float>& v1, const GemmView<float>& v2, bool parallel) {
  gemm_packed_pair<KernelAvx512>(v1, v2, kBlockingAvx512, parallel);
}
double sgemm_avx512_kernel_loop(long calls, float* scratch) { return kernel_loop<KernelAvx512>(calls, scratch); }

}  // namespace lava::gemm_detail

#pragma GCC pop_options
#endif
