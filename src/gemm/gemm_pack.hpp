#pragma once
// Packing for the SIMD GEMM driver (gemm_packed.hpp): copies of Â and B̂ into the micro-panel layout the
// micro-kernel streams through, zero-padded so the kernel never needs a partial-panel branch in its k loop.
//   Â micro-panel (MR rows): dst[k·MR + r] = Â(i0 + r, pc + k)     (kc, MR)
//   B̂ micro-panel (NR cols): dst[k·NR + c] = B̂(pc + k, j0 + c)     (kc, NR)
//
// Include only after <algorithm>, <cstring>, <omp.h> and gemm/gemm_view.hpp (ISA TUs compile this under
// #pragma GCC target, and nothing from the standard library may be first defined inside that region).
#ifndef LAVA_GEMM_ISA_TU
#error "gemm_pack.hpp is meant for the kernel translation units (gemm_avx2/avx512/generic.cpp) and tests"
#endif

namespace lava::gemm_detail {
// Unnamed: every ISA translation unit gets its own copies, compiled for its own target (no shared COMDATs).
namespace {

// k block length for a given K: the fewest blocks of ≤ kc_max, made equal (multiple of 8). Depends on K only,
// which is what makes the summation order, and so the bits, independent of threads and loop nests.
inline int kc_for(int K, int kc_max) {
  const int blocks = (K + kc_max - 1) / kc_max;
  const int kc = (K + blocks - 1) / blocks;
  return std::min(kc_max, (kc + 7) / 8 * 8);
}

// Transposing copy of a rows×8 tile: dst[kk·ds + r] = src[r·ss + kk] for r < rows ≤ 8, kk < 8. Uses the vector
// type's in-register 8×8 transpose when it has one (x86), else scalar loads and stores.
template <class V, class T>
inline void transpose_rows8(const T* src, long ss, int rows, T* dst, long ds) {
  if constexpr (requires { V::transpose_rows8(src, ss, rows, dst, ds); }) {
    V::transpose_rows8(src, ss, rows, dst, ds);
  } else {
    for (int r = 0; r < rows; ++r)
      for (int kk = 0; kk < 8; ++kk) dst[kk * ds + r] = src[r * ss + kk];
  }
}

// Rows × kc tile stored "k-contiguous" (element (r, k) at src[r·ss + k]) into dst[k·ds + r], 16 k at a time
// where the vector type has a 16×16 transpose (AVX-512), then 8 at a time.
template <class V, class T>
void transpose_rows(const T* src, long ss, int rows, int kc, T* dst, long ds) {
  int k = 0;
  if constexpr (requires { V::transpose_rows16(src, ss, rows, dst, ds); }) {
    for (; k + 16 <= kc; k += 16)
      for (int r0 = 0; r0 < rows; r0 += 16)
        V::transpose_rows16(src + long(r0) * ss + k, ss, std::min(16, rows - r0), dst + long(k) * ds + r0, ds);
  }
  for (; k + 8 <= kc; k += 8)
    for (int r0 = 0; r0 < rows; r0 += 8)
      transpose_rows8<V, T>(src + long(r0) * ss + k, ss, std::min(8, rows - r0), dst + long(k) * ds + r0, ds);
  for (; k < kc; ++k)
    for (int r = 0; r < rows; ++r) dst[long(k) * ds + r] = src[long(r) * ss + k];
}

// One MR-row Â micro-panel: dst[k·MR + r] = Â(i0 + r, pc + k) for r < mr, 0 for mr ≤ r < MR.   dst: (kc, MR)
template <class V, int MR, class T = typename V::scalar>
void pack_a_panel(const GemmView<T>& v, int i0, int mr, int pc, int kc, T* dst) {
  const T* src = v.A + long(i0) * v.rsa + long(pc) * v.csa;
  if (v.rsa == 1 && mr == MR) {  // Aᵀ stored: the MR values of one k are contiguous
    for (int k = 0; k < kc; ++k) std::memcpy(dst + k * MR, src + long(k) * v.csa, sizeof(T) * MR);
  } else if (v.csa == 1 && mr == MR) {  // A stored: MR rows, each contiguous in k
    transpose_rows<V, T>(src, v.rsa, MR, kc, dst, MR);
  } else {
    for (int k = 0; k < kc; ++k) {
      const T* s = src + long(k) * v.csa;
      for (int r = 0; r < mr; ++r) dst[k * MR + r] = s[long(r) * v.rsa];
      for (int r = mr; r < MR; ++r) dst[k * MR + r] = T(0);
    }
  }
}

// One NR-column B̂ micro-panel: dst[k·NR + c] = B̂(pc + k, j0 + c) for c < nr, 0 for nr ≤ c < NR.   dst: (kc, NR)
template <class V, int NR, class T = typename V::scalar>
void pack_b_panel(const GemmView<T>& v, int pc, int kc, int j0, int nr, T* dst) {
  const T* src = v.B + long(pc) * v.rsb + long(j0) * v.csb;
  if (v.csb == 1 && nr == NR) {  // B stored: one contiguous run of NR per k
    for (int k = 0; k < kc; ++k) std::memcpy(dst + k * NR, src + long(k) * v.rsb, sizeof(T) * NR);
  } else if (v.rsb == 1 && nr == NR) {  // Bᵀ stored: NR columns, each contiguous in k
    transpose_rows<V, T>(src, v.csb, NR, kc, dst, NR);
  } else {
    for (int k = 0; k < kc; ++k) {
      const T* s = src + long(k) * v.rsb;
      for (int c = 0; c < nr; ++c) dst[k * NR + c] = s[long(c) * v.csb];
      for (int c = nr; c < NR; ++c) dst[k * NR + c] = T(0);
    }
  }
}

// Consecutive B̂ micro-panels for columns [j0, j0 + ncols): dst + p·NR·kc holds panel p (layout of pack_b_panel).
// For a row-major B the k loop is outermost, so each B row is read as one contiguous run of ncols values.
template <class V, int NR, class T = typename V::scalar>
void pack_b_block(const GemmView<T>& v, int pc, int kc, int j0, int ncols, T* dst) {
  const int full = ncols / NR, panels = (ncols + NR - 1) / NR;
  if (v.csb == 1) {
    for (int k = 0; k < kc; ++k) {
      const T* s = v.B + long(pc + k) * v.rsb + j0;
      for (int p = 0; p < full; ++p) std::memcpy(dst + long(p) * NR * kc + k * NR, s + p * NR, sizeof(T) * NR);
    }
  } else {
    for (int p = 0; p < full; ++p) pack_b_panel<V, NR>(v, pc, kc, j0 + p * NR, NR, dst + long(p) * NR * kc);
  }
  if (full < panels) pack_b_panel<V, NR>(v, pc, kc, j0 + full * NR, ncols - full * NR, dst + long(full) * NR * kc);
}

// Asks for B̂ rows [k0, k1) × columns [j0, j0 + ncols) of a row-major B (csb == 1) to be brought into cache, so
// that the next pack_b_block finds them there instead of waiting on memory one far-apart row at a time.
template <class T>
void prefetch_b_rows(const GemmView<T>& v, int k0, int k1, int j0, int ncols) {
  for (int k = k0; k < k1; ++k) {
    const char* row = reinterpret_cast<const char*>(v.B + long(k) * v.rsb + j0);
    for (long off = 0; off < long(ncols) * long(sizeof(T)); off += 64) __builtin_prefetch(row + off, 0, 2);
  }
}

}  // namespace
}  // namespace lava::gemm_detail
