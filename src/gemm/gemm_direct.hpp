#pragma once
// The direct GEMM path, for shapes with M, N or K equal to 1 (matrix–vector products and outer products: the
// attention scores q·x_i of one query, a context Σ_i p_i x_i, the score vector v·tanh(·) and their gradients):
//   C[M×N] = beta·C + alpha · Â[M×K] · B̂[K×N]      (strides as in gemm_view.hpp)
// Packing copies operands so that the micro-kernel reuses each element from cache; with M or N equal to 1 every
// element of the other operand is used once, so the copy costs as much as the product's own reads, and with K = 1 the
// kernel's k loop is a single step. No packing here, and each C element is reduced over k in one fixed order, so the
// result does not depend on the thread count:
//   B̂ rows contiguous in j (csb = 1) and K short or no contiguous k: C row i accumulates Â(i,k)·B̂(k,:) for
//     k = 0, 1, ... (vector over j);
//   Â rows and B̂ columns contiguous in k (csa = rsb = 1): a dot product with 8 running sums (k mod 8), added in
//     lane order, then the k tail;
//   N = 1 with Â columns contiguous (rsa = 1, Âᵀ·x): acc[i] += Â(i,k)·B̂(k,0) for k = 0, 1, ... (vector over i);
//   otherwise the plain triple loop.
// Buffers: A, B, C as described by the view; acc: a (kBlockN) stack row.
#include <algorithm>

#include "gemm/gemm_view.hpp"
#include "core/parallel.hpp"
#include "core/vec_math.hpp"

namespace lava::gemm_detail {

inline bool use_direct(int M, int N, int K) { return M == 1 || N == 1 || K == 1; }

template <class T>
inline void store_c(T* c, T s, T alpha, T beta) {
  *c = beta == T(0) ? alpha * s : beta * *c + alpha * s;
}

// c[j] = beta·c[j] + alpha·s[j] for j < n, the beta test outside the loop so that the loop vectorises.
template <class T>
inline void store_c_row(T* c, const T* s, int n, T alpha, T beta) {
  if (beta == T(0)) {
    for (int j = 0; j < n; ++j) c[j] = alpha * s[j];
  } else {
    for (int j = 0; j < n; ++j) c[j] = beta * c[j] + alpha * s[j];
  }
}

template <class T>
void gemm_direct(const GemmView<T>& v, bool parallel) {
  constexpr int kBlockN = 256;
  // A region opens only when it splits (for_each_split_if): an OpenMP `if` that is false still enters the runtime,
  // and the attention products of a soft step make ~1,900 such calls.
  const bool split = parallel && long(v.M) * v.N * v.K >= (1L << 16);
  const bool k_contiguous = v.csa == 1 && v.rsb == 1;
  if (v.csb == 1 && (v.K < 16 || !k_contiguous) && !(v.N == 1 && v.rsa == 1)) {
    for_each_split_if(v.M, split, [&](int64_t i) {
      for (int j0 = 0; j0 < v.N; j0 += kBlockN) {
        const int nb = std::min(kBlockN, v.N - j0);
        T acc[kBlockN] = {};
        for (int k = 0; k < v.K; ++k) {
          const T a = v.A[i * v.rsa + k * v.csa];
          const T* b = v.B + k * v.rsb + j0;
          for (int j = 0; j < nb; ++j) acc[j] += a * b[j];
        }
        store_c_row(v.C + i * v.ldc + j0, acc, nb, v.alpha, v.beta);
      }
    });
  } else if (k_contiguous) {
    for_each_split_if(v.M, split, [&](int64_t i) {
      for (int j = 0; j < v.N; ++j)
        store_c(v.C + i * v.ldc + j, vmath::dot_fixed_order(v.A + i * v.rsa, v.B + j * v.csb, v.K), v.alpha, v.beta);
    });
  } else if (v.N == 1 && v.rsa == 1) {
    for_each_split_if((v.M + kBlockN - 1) / kBlockN, split, [&](int64_t block) {
      const int i0 = int(block) * kBlockN, mb = std::min(kBlockN, v.M - i0);
      T acc[kBlockN] = {};
      for (int k = 0; k < v.K; ++k) {
        const T b = v.B[k * v.rsb];
        const T* a = v.A + i0 + k * v.csa;
        for (int i = 0; i < mb; ++i) acc[i] += a[i] * b;
      }
      for (int i = 0; i < mb; ++i) store_c(v.C + (i0 + i) * v.ldc, acc[i], v.alpha, v.beta);
    });
  } else {
    for_each_split_if(v.M, split, [&](int64_t i) {
      for (int j = 0; j < v.N; ++j) {
        T s = T(0);
        for (int k = 0; k < v.K; ++k) s += v.A[i * v.rsa + k * v.csa] * v.B[k * v.rsb + j * v.csb];
        store_c(v.C + i * v.ldc + j, s, v.alpha, v.beta);
      }
    });
  }
}

}  // namespace lava::gemm_detail
