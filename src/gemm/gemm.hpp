#pragma once
// General matrix multiply, row-major:
//   C[M×N] = beta·C + alpha · op(A)[M×K] · op(B)[K×N],   op(X) = X or Xᵀ.
// Buffers (row-major, leading dimension = row stride in elements):
//   A: (M, K) with lda ≥ K when !trans_a, or (K, M) with lda ≥ M when trans_a
//   B: (K, N) with ldb ≥ N when !trans_b, or (N, K) with ldb ≥ K when trans_b
//   C: (M, N) with ldc ≥ N
// beta == 0 means C is write-only (NaNs already in C are ignored), as in BLAS.
// Deterministic: every C element is reduced over k in an order that does not depend on the thread count.
// Parallel with OpenMP inside; safe to call from inside a parallel region (then it runs on the calling thread).
#include "core/op_profile.hpp"  // LAVA_PROFILE

namespace lava {

template <class T>
void gemm(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb,
          T beta, T* C, int ldc);

// op(B) packed once for several products that share it (a weight read at every time step, or by every chunk of
// rows): gemm_pack_b fills `packed` (gemm_packed_b_size elements), and the gemm overload below reads it instead of
// packing op(B) again in every call. The results are the same bits as the plain gemm with op(B).
//   B: (K, N) with ldb ≥ N when !trans, or (N, K) with ldb ≥ K when trans; packed: gemm_packed_b_size(K, N)
template <class T>
struct PackedB {
  bool trans = false;
  int K = 0, N = 0;
  const T* B = nullptr;  // op(B) itself: must stay valid (shapes that skip packing read it directly)
  int ldb = 0;
  T* packed = nullptr;
};
template <class T>
long gemm_packed_b_size(int K, int N);
template <class T>
void gemm_pack_b(const PackedB<T>& b);
// C[M×N] = beta·C + alpha · op(A)[M×K] · op(B), op(B) from b (N = b.N, K = b.K).
template <class T>
void gemm(bool trans_a, int M, T alpha, const T* A, int lda, const PackedB<T>& b, T beta, T* C, int ldc);

// One product's arguments, for gemm_pair: C = beta·C + alpha · op(A) · op(B), with op(B) from `packed` when it is
// set (its trans, K, N, B and ldb then stand in for trans_b, K, N, B and ldb here).
template <class T>
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int M = 0, N = 0, K = 0;
  T alpha = T(1);
  const T* A = nullptr;
  int lda = 0;
  const T* B = nullptr;
  int ldb = 0;
  T beta = T(0);
  T* C = nullptr;
  int ldc = 0;
  const PackedB<T>* packed = nullptr;
};
// The one product `a` describes, as the gemm overloads above run it.
template <class T>
void gemm(const GemmArgs<T>& a);
// Two independent products, with the bits of gemm(first) then gemm(second). When both are large enough to split
// over threads they share one parallel region, and a thread that finishes its share of one early goes on with the
// other instead of waiting at a join (gemm_packed.hpp, gemm_packed_pair). Neither C may overlap the other
// product's operands or C.
template <class T>
void gemm_pair(const GemmArgs<T>& first, const GemmArgs<T>& second);

#if LAVA_PROFILE
// 2·M·N·K summed over every gemm<float|double> call of the process (a relaxed atomic counter, for benchmarks that
// report the GFLOP/s of a whole training step: the GEMMs are almost all of its floating-point work). Profiling
// builds only (core/op_profile.hpp).
unsigned long long gemm_flop_count();
// The part of it whose calls were split over threads: the rest ran on the calling thread alone (too small to
// split, or inside a parallel region, where each call runs whole on its thread).
unsigned long long gemm_threaded_flop_count();
#endif

// The plain triple loop, used as the reference in tests and benchmarks.
template <class T>
void gemm_naive(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb,
                T beta, T* C, int ldc);

}  // namespace lava
