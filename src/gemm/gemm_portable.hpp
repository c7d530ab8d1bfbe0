#pragma once
// Portable cache-blocked GEMM (any CPU; the compiler vectorizes the micro-kernel's inner j loop):
//   C[M×N] = beta·C + alpha · Â[M×K] · B̂[K×N]   (see GemmView for the strides).
// Loops: tile (MC rows × NC cols) of C  →  k block of KC  →  pack Â and B̂  →  MR×NR micro-tiles.
// Determinism: C(i,j) = (…((beta·C + alpha·s₀) + alpha·s₁)…) with s_p = Σ_{k in block p} Â(i,k)·B̂(k,j) summed in
// increasing k. Block p is [p·KC, (p+1)·KC) whatever the thread count, so the bits do not depend on threads.
#include <algorithm>

#include "gemm/gemm_view.hpp"

namespace lava::gemm_detail {

template <class T>
struct PortableBlocking {
  static constexpr int MR = 6;
  static constexpr int NR = int(64 / sizeof(T));  // one cache line of C per micro-tile row
  static constexpr int KC = 256;
  static constexpr int MC = 96;    // multiple of MR
  static constexpr int NC = 1024;  // multiple of NR
};

// Packs Â[ic:ic+mc, pc:pc+kc] into MR-row micro-panels, k-major: ap[(ir/MR)·MR·kc + k·MR + r], zero-padded rows.
template <class T, int MR>
void pack_a_portable(const GemmView<T>& v, int ic, int pc, int mc, int kc, T* ap) {
  for (int ir = 0; ir < mc; ir += MR) {
    const int mr = std::min(MR, mc - ir);
    T* dst = ap + long(ir) * kc;
    for (int k = 0; k < kc; ++k) {
      const T* src = v.A + long(ic + ir) * v.rsa + long(pc + k) * v.csa;
      for (int r = 0; r < mr; ++r) dst[k * MR + r] = src[r * v.rsa];
      for (int r = mr; r < MR; ++r) dst[k * MR + r] = T(0);
    }
  }
}

// Packs B̂[pc:pc+kc, jc:jc+nc] into NR-column micro-panels, k-major: bp[(jr/NR)·NR·kc + k·NR + c], zero-padded cols.
template <class T, int NR>
void pack_b_portable(const GemmView<T>& v, int pc, int jc, int kc, int nc, T* bp) {
  for (int jr = 0; jr < nc; jr += NR) {
    const int nr = std::min(NR, nc - jr);
    T* dst = bp + long(jr) * kc;
    for (int k = 0; k < kc; ++k) {
      const T* src = v.B + long(pc + k) * v.rsb + long(jc + jr) * v.csb;
      for (int c = 0; c < nr; ++c) dst[k * NR + c] = src[c * v.csb];
      for (int c = nr; c < NR; ++c) dst[k * NR + c] = T(0);
    }
  }
}

// acc[MR×NR] = Σ_k a[k·MR + r]·b[k·NR + c]  (a: packed MR×kc panel, b: packed kc×NR panel), then the mr×nr corner
// is written to c (row stride ldc): first k block → c = beta·c + alpha·acc (beta==0 → alpha·acc), later → c += alpha·acc.
template <class T, int MR, int NR>
void micro_kernel_portable(int kc, const T* a, const T* b, T* c, long ldc, int mr, int nr, T alpha, T beta,
                           bool first) {
  T acc[MR][NR] = {};
  for (int k = 0; k < kc; ++k) {
    for (int r = 0; r < MR; ++r) {
      const T ar = a[k * MR + r];
      for (int j = 0; j < NR; ++j) acc[r][j] += ar * b[k * NR + j];
    }
  }
  for (int r = 0; r < mr; ++r) {
    T* cr = c + r * ldc;
    if (!first) {
      for (int j = 0; j < nr; ++j) cr[j] += alpha * acc[r][j];
    } else if (beta == T(0)) {
      for (int j = 0; j < nr; ++j) cr[j] = alpha * acc[r][j];
    } else {
      for (int j = 0; j < nr; ++j) cr[j] = beta * cr[j] + alpha * acc[r][j];
    }
  }
}

// Requires M, N, K ≥ 1. Parallel over C tiles (never over k) when `parallel`.
template <class T>
void gemm_portable(const GemmView<T>& v, bool parallel) {
  using Bk = PortableBlocking<T>;
  constexpr int MR = Bk::MR, NR = Bk::NR, KC = Bk::KC, MC = Bk::MC, NC = Bk::NC;
  const int m_tiles = (v.M + MC - 1) / MC, n_tiles = (v.N + NC - 1) / NC;
  const int tiles = m_tiles * n_tiles;
#pragma omp parallel if (parallel && tiles > 1)
  {
    thread_local ScratchBuffer a_buf, b_buf;
    T* ap = static_cast<T*>(a_buf.get(sizeof(T) * MC * KC));  // (MC/MR) panels × KC × MR
    T* bp = static_cast<T*>(b_buf.get(sizeof(T) * NC * KC));  // (NC/NR) panels × KC × NR
#pragma omp for schedule(static)
    for (int t = 0; t < tiles; ++t) {
      const int ic = (t / n_tiles) * MC, jc = (t % n_tiles) * NC;
      const int mc = std::min(MC, v.M - ic), nc = std::min(NC, v.N - jc);
      for (int pc = 0; pc < v.K; pc += KC) {
        const int kc = std::min(KC, v.K - pc);
        pack_a_portable<T, MR>(v, ic, pc, mc, kc, ap);
        pack_b_portable<T, NR>(v, pc, jc, kc, nc, bp);
        for (int jr = 0; jr < nc; jr += NR) {
          for (int ir = 0; ir < mc; ir += MR) {
            micro_kernel_portable<T, MR, NR>(kc, ap + long(ir) * kc, bp + long(jr) * kc,
                                             v.C + long(ic + ir) * v.ldc + (jc + jr), v.ldc,
                                             std::min(MR, mc - ir), std::min(NR, nc - jr), v.alpha, v.beta,
                                             pc == 0);
          }
        }
      }
    }
  }
}

}  // namespace lava::gemm_detail
