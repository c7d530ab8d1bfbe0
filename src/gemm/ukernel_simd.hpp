#pragma once
// Register-blocked micro-kernel, generic over a SIMD vector type V (V::W lanes of V::scalar, float or double):
//   acc[MR×NR] = Σ_{k<kc} a[k·MR + r] · b[k·ldbk + c],   NR = NV·W,
//   then C[r][c] = beta·C + alpha·acc (first k block; beta == 0 → alpha·acc) or C += alpha·acc (later blocks).
// Buffers: a  (kc, MR) packed Â micro-panel, rows ≥ mr zero-padded; or, with lda > 0, MR full rows of a row-major
//             Â read in place (element (r, k) at a[r·lda + k]): the broadcasts read the same values either way
//          b  (kc, ≥NR) B̂ strip with row stride ldbk (NR when packed, ldb when read in place)
//          c  (mr, nr) C tile, row stride ldc; only the mr×nr corner is read or written (masked on the right edge)
// Per k: NV vector loads of b, MR broadcasts of a, MR·NV FMAs into MR·NV accumulator registers
// (AVX2 6×16: 12 ymm accumulators; AVX-512 12×32: 24 zmm accumulators).
// The k order of every accumulator is fixed, so results never depend on how tiles are spread over threads.
//
// Include this header only after its dependencies (see gemm_packed.hpp: ISA translation units compile it under
// `#pragma GCC target`, and nothing from the standard library may be first defined inside that region).
#ifndef LAVA_GEMM_ISA_TU
#error "ukernel_simd.hpp is meant for the kernel translation units (gemm_avx2/avx512/generic.cpp) and tests"
#endif

#include "gemm/gemm_kernels.hpp"  // kKernelLoopK, kKernelLoopScratch (no standard headers: safe inside the region)

namespace lava::gemm_detail {
// Unnamed: every ISA translation unit gets its own copies, compiled for its own target (no shared COMDATs).
namespace {

template <class V, int MR, int NV>
struct SimdKernel {
  using Vec = V;
  using T = typename V::scalar;
  static constexpr int kMR = MR;
  static constexpr int kNR = NV * V::W;

  // Edge panels with few live rows run a shorter kernel (ROWS = MR/3 or 2·MR/3) over the same packed panel, so
  // e.g. M = 64 with MR = 12 wastes no FMAs on 8 padding rows. The arithmetic per element is the same.
  static void run(int kc, const T* a, const T* b, long ldbk, T* c, long ldc, int mr, int nr, T alpha, T beta,
                  bool first, long lda = 0) {
    static_assert(MR % 3 == 0, "edge kernels split MR in thirds");
    if (lda > 0) {  // in place: full panels only (mr == MR), so no row past the matrix is read
      run_rows<MR, false>(kc, a, lda, b, ldbk, c, ldc, mr, nr, alpha, beta, first);
    } else if (mr <= MR / 3) {
      run_rows<MR / 3, true>(kc, a, 0, b, ldbk, c, ldc, mr, nr, alpha, beta, first);
    } else if (mr <= 2 * MR / 3) {
      run_rows<2 * MR / 3, true>(kc, a, 0, b, ldbk, c, ldc, mr, nr, alpha, beta, first);
    } else {
      run_rows<MR, true>(kc, a, 0, b, ldbk, c, ldc, mr, nr, alpha, beta, first);
    }
  }

  // Rows [0, ROWS) of the tile; a packed (stride MR per k) or, when !PACKED_A, rows lda apart read in place.
  template <int ROWS, bool PACKED_A>
  static void run_rows(int kc, const T* a, long lda, const T* b, long ldbk, T* c, long ldc, int mr, int nr, T alpha,
                       T beta, bool first) {
    using reg = typename V::reg;
    reg acc[ROWS][NV];
#pragma GCC unroll 32
    for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = V::zero();

    // Ask for the C tile's lines (first and last element of each row: every line it spans) before the k loop, for
    // writing: the epilogue's loads and stores then find them in L1 instead of waiting on L3 at the end. C rows are
    // ldc apart (40 KB in the output layer), so no hardware prefetcher fetches them. No effect on the arithmetic.
    // It matters most for a product that reads its C (beta = 1, the [dW; db] accumulation): there the epilogue's
    // loads would otherwise each wait for a line from L3.
#pragma GCC unroll 32
    for (int r = 0; r < ROWS; ++r) {
      if (r >= mr) break;
      __builtin_prefetch(c + r * ldc, 1, 3);
      __builtin_prefetch(c + r * ldc + nr - 1, 1, 3);
    }
#pragma GCC unroll 4
    for (int k = 0; k < kc; ++k) {
      reg bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = V::load(b + k * ldbk + v * V::W);
#pragma GCC unroll 32
      for (int r = 0; r < ROWS; ++r) {
        const reg ar = V::bcast(PACKED_A ? a + k * MR + r : a + r * lda + k);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][v] = V::fma(ar, bv[v], acc[r][v]);
      }
    }

    const reg va = V::set1(alpha), vb = V::set1(beta);
    // 0: c += alpha·acc (later k blocks), 1: c = alpha·acc (beta == 0), 2: c = beta·c + alpha·acc
    const int mode = !first ? 0 : (beta == T(0) ? 1 : 2);
    if (nr == kNR) {
#pragma GCC unroll 32
      for (int r = 0; r < ROWS; ++r) {
        if (r >= mr) break;
        T* cr = c + r * ldc;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          T* p = cr + v * V::W;
          if (mode == 0) V::store(p, V::fma(va, acc[r][v], V::load(p)));
          else if (mode == 1) V::store(p, V::mul(va, acc[r][v]));
          else V::store(p, V::fma(vb, V::load(p), V::mul(va, acc[r][v])));
        }
      }
    } else {
      typename V::mask m[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const int lanes = nr - v * V::W;
        m[v] = V::make_mask(lanes < 0 ? 0 : (lanes > V::W ? V::W : lanes));
      }
#pragma GCC unroll 32
      for (int r = 0; r < ROWS; ++r) {
        if (r >= mr) break;
        T* cr = c + r * ldc;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          if (v * V::W >= nr) break;
          T* p = cr + v * V::W;
          if (mode == 0) V::store_masked(p, m[v], V::fma(va, acc[r][v], V::load_masked(p, m[v])));
          else if (mode == 1) V::store_masked(p, m[v], V::mul(va, acc[r][v]));
          else V::store_masked(p, m[v], V::fma(vb, V::load_masked(p, m[v]), V::mul(va, acc[r][v])));
        }
      }
    }
  }
};

// The micro-kernel alone: `calls` runs over one packed Â micro-panel and one B̂ strip of kc, C += Â·B̂ each time.
// With kc = 128 (at most 22 KiB of operands) everything is hot in L1, so this is the ceiling the packed driver's
// loop nests can approach; `lava bench gemm` reports it next to the FMA peak. Returns the flops, 2·MR·NR·kc·calls.
// scratch: Â (kc, MR) | B̂ (kc, NR) | C (MR, NR), at least kKernelLoopScratch floats (gemm_kernels.hpp), filled by
// the caller with small values (no NaN or subnormal operands, which would time something else).
template <class Kn, class T = typename Kn::T>
double kernel_loop(long calls, T* scratch) {
  constexpr int kc = kKernelLoopK, MR = Kn::kMR, NR = Kn::kNR;
  static_assert((MR + NR) * kc + MR * NR <= kKernelLoopScratch, "kernel_loop scratch too small for this tile");
  T* a = scratch;
  T* b = a + MR * kc;
  T* c = b + kc * NR;
  for (long i = 0; i < calls; ++i) Kn::run(kc, a, b, NR, c, NR, MR, NR, T(1), T(0), /*first=*/false);
  return 2.0 * MR * NR * kc * double(calls);
}

}  // namespace
}  // namespace lava::gemm_detail
