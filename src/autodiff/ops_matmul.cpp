// Matrix products on top of gemm (src/gemm). With C = op(A)·op(B):
//   d op(A) = dC · op(B)ᵀ      d op(B) = op(A)ᵀ · dC
// Each case below writes that identity for the stored (possibly transposed) layout, accumulating with beta = 1.
#include <omp.h>

#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "gemm/gemm.hpp"
#include "core/parallel.hpp"

namespace lava {

namespace {
// One product C(M,N) = op(A)·op(B), with A stored (M,K) or (K,M), B stored (K,N) or (N,K).
struct ProductDims {
  int M, N, K;
  bool ta, tb;
  int lda() const { return ta ? M : K; }
  int ldb() const { return tb ? K : N; }
};

template <class T>
void product_forward(const ProductDims& d, const T* A, const T* B, T* C) {
  gemm<T>(d.ta, d.tb, d.M, d.N, d.K, T(1), A, d.lda(), B, d.ldb(), T(0), C, d.N);
}

template <class T>
void product_backward(const ProductDims& d, const T* A, const T* B, const T* dC, T* dA, T* dB) {
  const int M = d.M, N = d.N, K = d.K;
  if (dA) {
    if (!d.ta)  // dA(M,K) += dC(M,N) · op(B)ᵀ
      gemm<T>(false, !d.tb, M, K, N, T(1), dC, N, B, d.ldb(), T(1), dA, K);
    else  // A stored (K,M): dA(K,M) += op(B)(K,N) · dCᵀ
      gemm<T>(d.tb, true, K, M, N, T(1), B, d.ldb(), dC, N, T(1), dA, M);
  }
  if (dB) {
    if (!d.tb)  // dB(K,N) += op(A)ᵀ(K,M) · dC(M,N)
      gemm<T>(!d.ta, false, K, N, M, T(1), A, d.lda(), dC, N, T(1), dB, N);
    else  // B stored (N,K): dB(N,K) += dCᵀ(N,M) · op(A)(M,K)
      gemm<T>(true, d.ta, N, K, M, T(1), dC, N, A, d.lda(), T(1), dB, K);
  }
}

}  // namespace

template <class T>
Var<T> matmul(Var<T> a, Var<T> b, bool trans_a, bool trans_b) {
  LAVA_PROFILE_OP("matmul");
  const Shape sa = a.shape();
  const Shape sb = b.shape();
  LAVA_CHECK(sb.rank == 2 || sb.rank == 3, "matmul: b must have rank 2 or 3, got {}", sb.str());
  LAVA_CHECK(sa.rank >= 2, "matmul: a must have rank >= 2, got {}", sa.str());
  const bool batched = sb.rank == 3;
  int64_t batch = 1;
  ProductDims d{};
  d.ta = trans_a;
  d.tb = trans_b;
  Shape out;
  if (batched) {
    LAVA_CHECK(sa.rank == 3 && sa[0] == sb[0], "matmul: batched shapes {} and {} differ", sa.str(), sb.str());
    batch = sa[0];
    d.M = int(trans_a ? sa[2] : sa[1]);
    d.K = int(trans_a ? sa[1] : sa[2]);
    out = Shape{batch, d.M, 0};
  } else if (trans_a) {
    LAVA_CHECK(sa.rank == 2, "matmul: a transposed must have rank 2, got {}", sa.str());
    d.M = int(sa[1]);
    d.K = int(sa[0]);
    out = Shape{d.M, 0};
  } else {  // fold a's leading dimensions into rows: (..., M, K) -> (rows, K)
    d.K = int(sa[-1]);
    d.M = int(sa.numel() / d.K);
    out = sa;
  }
  const int64_t kb = trans_b ? sb[-1] : sb[-2];
  d.N = int(trans_b ? sb[-2] : sb[-1]);
  LAVA_CHECK(kb == d.K, "matmul: inner dimensions differ: {} and {}", sa.str(), sb.str());
  out[-1] = d.N;

  Var<T> c = a.tape->make_output(out, a, b);
  const int64_t sa_n = int64_t(d.M) * d.K, sb_n = int64_t(d.K) * d.N, sc_n = int64_t(d.M) * d.N;
  // Many small products: one region, the products shared out over the threads. A large product: gemm splits it
  // itself. Fewer than 2^17 multiply-adds in all run on one thread: a fork/join costs a few µs while the other
  // thread still spins (GOMP_SPINCOUNT, as the scripts set it) and 10-20 µs once it sleeps, more than half of what
  // such a batch takes. The attention products of one decoder step (32 products of 1×20×256, 2^17.3 multiply-adds
  // in all) do split, with one region per batch and not one per product: a region per product would pay a
  // fork/join for each of a step's 1,900 products, each far smaller than the fork/join itself.
  const int64_t flops_per_product = int64_t(d.M) * d.N * d.K;
  const bool parallel_batches = batched && batch > 1 && omp_get_level() == 0 && flops_per_product < (1 << 18) &&
                                batch * flops_per_product >= (int64_t(1) << 17);
  for_each_split_if(batch, parallel_batches,
                    [&](int64_t t) { product_forward(d, a.val() + t * sa_n, b.val() + t * sb_n, c.val() + t * sc_n); });
  if (c.needs_grad())
    a.tape->on_backward([a, b, c, d, batch, sa_n, sb_n, sc_n, parallel_batches] {
      for_each_split_if(batch, parallel_batches, [&](int64_t t) {
        product_backward(d, a.val() + t * sa_n, b.val() + t * sb_n, c.grad() + t * sc_n,
                         a.needs_grad() ? a.grad() + t * sa_n : nullptr,
                         b.needs_grad() ? b.grad() + t * sb_n : nullptr);
      });
    });
  return c;
}

template Var<float> matmul(Var<float>, Var<float>, bool, bool);
template Var<double> matmul(Var<double>, Var<double>, bool, bool);

}  // namespace lava
