#pragma once
// In-register 16×16 float transpose for the AVX-512 packing routines:
//   dst[kk·ds + r] = src[r·ss + kk]  for r < rows ≤ 16, kk < 16.
// Buffers: src (rows, 16) with row stride ss;  dst (16, rows) with row stride ds (only `rows` lanes per row written).
// Why not two 8×8 ones: a transposed operand's rows are often a multiple of 4 KiB apart (K = 1024, 2048), so the
// rows of a 32-wide strip share one L1 set and evict one another; 16 k at a time reads each 64-byte line of a row
// once, where 8 at a time read it twice (the second time from L2). It also takes a third fewer shuffles per value
// (64 for 256 values, against 24 for 64). Measured on the NT LSTM-step product (see README, "Measuring speed").
// Include only inside a `#pragma GCC target` region that enables AVX-512F (gemm_avx512.cpp).
#ifndef LAVA_GEMM_ISA_TU
#error "x86_transpose16.hpp is meant for the AVX-512 translation unit (gemm_avx512.cpp)"
#endif

namespace lava::gemm_detail {
namespace {

// GCC 12's _mm512_undefined_ps (`__m512 __Y = __Y;`, the pass-through operand of the unmasked unpack and
// shuffle_f32x4 intrinsics) trips -Wuninitialized once inlined (GCC bug 105593, fixed in GCC 13), and
// -Wmaybe-uninitialized at -Og (the sanitizer build).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
struct X86Transpose16 {
  static void transpose_rows16(const float* src, long ss, int rows, float* dst, long ds) {
    __m512 r[16];
    for (int i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_loadu_ps(src + i * ss) : _mm512_setzero_ps();
    // 1: rows 2j, 2j+1 interleaved within each 128-bit lane: t[2j] = (a0 b0 a1 b1), t[2j+1] = (a2 b2 a3 b3)
    __m512 t[16];
    for (int j = 0; j < 8; ++j) {
      t[2 * j] = _mm512_unpacklo_ps(r[2 * j], r[2 * j + 1]);
      t[2 * j + 1] = _mm512_unpackhi_ps(r[2 * j], r[2 * j + 1]);
    }
    // 2: 4×4 blocks transposed within each 128-bit lane: lane L of u[4q + m] holds rows 4q..4q+3 at k = 4L + m
    __m512 u[16];
    for (int q = 0; q < 4; ++q) {
      u[4 * q + 0] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
      u[4 * q + 1] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0xEE);
      u[4 * q + 2] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
      u[4 * q + 3] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xEE);
    }
    // 3, 4: the 4×4 grid of 128-bit lanes transposed: lane q of out[4L + m] = lane L of u[4q + m]
    __m512 out[16];
    for (int m = 0; m < 4; ++m) {
      const __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x44), v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xEE);
      const __m512 v2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x44);
      const __m512 v3 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xEE);
      out[m] = _mm512_shuffle_f32x4(v0, v2, 0x88);
      out[4 + m] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
      out[8 + m] = _mm512_shuffle_f32x4(v1, v3, 0x88);
      out[12 + m] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
    }
    const __mmask16 lanes = __mmask16((1u << rows) - 1u);
    for (int kk = 0; kk < 16; ++kk) _mm512_mask_storeu_ps(dst + kk * ds, lanes, out[kk]);
  }
};
#pragma GCC diagnostic pop

}  // namespace
}  // namespace lava::gemm_detail
