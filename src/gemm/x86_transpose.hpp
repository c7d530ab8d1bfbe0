#pragma once
// In-register 8×8 float transpose for the packing routines (AVX, so usable from both the AVX2 and the AVX-512
// translation units):  dst[kk·ds + r] = src[r·ss + kk]  for r < rows ≤ 8, kk < 8.
// Buffers: src (rows, 8) with row stride ss;  dst (8, rows) with row stride ds (only `rows` lanes per row written).
// Include only inside a `#pragma GCC target` region that enables AVX (see gemm_avx2.cpp).
#ifndef LAVA_GEMM_ISA_TU
#error "x86_transpose.hpp is meant for the ISA translation units (gemm_avx2.cpp, gemm_avx512.cpp)"
#endif

namespace lava::gemm_detail {
namespace {

struct X86Transpose {
  static void transpose_rows8(const float* src, long ss, int rows, float* dst, long ds) {
    __m256 r[8];
    for (int i = 0; i < 8; ++i) r[i] = i < rows ? _mm256_loadu_ps(src + i * ss) : _mm256_setzero_ps();
    // pairs of rows interleaved, then quadruples, then the 128-bit halves swapped across
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    const __m256 out[8] = {_mm256_permute2f128_ps(u0, u4, 0x20), _mm256_permute2f128_ps(u1, u5, 0x20),
                           _mm256_permute2f128_ps(u2, u6, 0x20), _mm256_permute2f128_ps(u3, u7, 0x20),
                           _mm256_permute2f128_ps(u0, u4, 0x31), _mm256_permute2f128_ps(u1, u5, 0x31),
                           _mm256_permute2f128_ps(u2, u6, 0x31), _mm256_permute2f128_ps(u3, u7, 0x31)};
    if (rows == 8) {
      for (int kk = 0; kk < 8; ++kk) _mm256_storeu_ps(dst + kk * ds, out[kk]);
    } else {
      const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      for (int kk = 0; kk < 8; ++kk) _mm256_maskstore_ps(dst + kk * ds, m, out[kk]);
    }
  }
};

}  // namespace
}  // namespace lava::gemm_detail
