#pragma once
// One GEMM call with the transposes folded into strides, shared by every GEMM path:
//   C[M×N] = beta·C + alpha · Â[M×K] · B̂[K×N],   Â(i,k) = A[i·rsa + k·csa],   B̂(k,j) = B[k·rsb + j·csb].
// NN: rsa=lda, csa=1, rsb=ldb, csb=1.  trans_a swaps (rsa, csa); trans_b swaps (rsb, csb).
#include <cstddef>
#include <cstdlib>
#include <new>

namespace lava::gemm_detail {

template <class T>
struct GemmView {
  int M, N, K;
  T alpha, beta;
  const T* A;  // Â(i,k) = A[i*rsa + k*csa]
  long rsa, csa;
  const T* B;  // B̂(k,j) = B[k*rsb + j*csb]
  long rsb, csb;
  T* C;        // C(i,j) = C[i*ldc + j]
  long ldc;
  // Both null for a plain call. pack_b_into: pack all of B̂ there (see pack_b_whole) and compute nothing.
  // packed_b: B̂ as pack_b_whole left it, read in place of packing B per call (B, rsb, csb unused).
  T* pack_b_into = nullptr;
  const T* packed_b = nullptr;
};

template <class T>
GemmView<T> make_view(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B,
                      int ldb, T beta, T* C, int ldc) {
  GemmView<T> v{M, N, K, alpha, beta, A, trans_a ? 1L : long(lda), trans_a ? long(lda) : 1L,
                B, trans_b ? 1L : long(ldb), trans_b ? long(ldb) : 1L, C, long(ldc)};
  return v;
}

// C := beta·C over an m×n block (beta == 0 writes zeros, so NaNs in C are dropped, as in BLAS).
template <class T>
void scale_c(T* C, long ldc, int m, int n, T beta) {
  for (int i = 0; i < m; ++i) {
    T* c = C + i * ldc;
    if (beta == T(0)) {
      for (int j = 0; j < n; ++j) c[j] = T(0);
    } else if (beta != T(1)) {
      for (int j = 0; j < n; ++j) c[j] *= beta;
    }
  }
}

// A growable, 4 KiB-aligned scratch buffer owned by one thread (each OpenMP worker has its own thread_local
// instance, so packing never shares memory between threads). It only grows, so steady-state calls never allocate.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { std::free(data_); }

  void* get(std::size_t bytes) {
    if (bytes > cap_) {
      std::size_t cap = (bytes + kAlign - 1) / kAlign * kAlign;
      void* p = std::aligned_alloc(kAlign, cap);
      if (p == nullptr) throw std::bad_alloc();
      std::free(data_);
      data_ = p;
      cap_ = cap;
    }
    return data_;
  }

 private:
  static constexpr std::size_t kAlign = 4096;
  void* data_ = nullptr;
  std::size_t cap_ = 0;
};

}  // namespace lava::gemm_detail
