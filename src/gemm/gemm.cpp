// C[M×N] = beta·C + alpha · op(A)·op(B): argument handling and the choice of path (see gemm.hpp for the contract).
#include "gemm/gemm.hpp"

#include <omp.h>

#include <atomic>
#include <optional>
#include <type_traits>

#include "core/check.hpp"
#include "core/op_profile.hpp"
#include "gemm/gemm_direct.hpp"
#include "gemm/gemm_kernels.hpp"
#include "gemm/gemm_view.hpp"

namespace lava {

namespace {

// Below this many multiply-adds a fork/join costs more than the second thread saves.
constexpr double kMinParallelFlops = 64.0 * 64.0 * 64.0;

// Whether a call of this much work splits over threads when there are several: the op profile counts its time as
// work more threads could share (Amdahl's p) even on one thread, where it does not split.
// omp_get_level, not omp_in_parallel: inside an inactive region (a parallel for whose `if` was false) the latter
// is false, and a team started there is a nested team whose threads are created and ended at every call.
bool worth_splitting(double work, double min_work) { return omp_get_level() == 0 && work >= min_work; }
bool worth_splitting(int M, int N, int K) { return worth_splitting(double(M) * N * K, kMinParallelFlops); }
// A call worth splitting splits when there is more than one thread.
bool use_threads(bool worth_it) { return worth_it && omp_get_max_threads() > 1; }

}  // namespace

namespace gemm_detail {

FloatPath float_path() {
#if LAVA_GEMM_HAVE_X86
  static const FloatPath path = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return FloatPath::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return FloatPath::avx2;
    return FloatPath::generic;
  }();
  return path;
#else
  return FloatPath::generic;
#endif
}

const char* float_path_name(FloatPath p) {
  switch (p) {
    case FloatPath::avx512: return "avx512 12x32";
    case FloatPath::avx2: return "avx2 6x16";
    default: return "generic (vector extensions)";
  }
}

// Every float GEMM goes through here: the SIMD path of this CPU, else the portable one.
void sgemm_dispatch(const GemmView<float>& v, bool parallel) {
#if LAVA_GEMM_HAVE_X86
  switch (float_path()) {
    case FloatPath::avx512: sgemm_avx512(v, parallel); return;
    case FloatPath::avx2: sgemm_avx2(v, parallel); return;
    default: break;
  }
#endif
  sgemm_generic(v, parallel);
}

void sgemm_dispatch_pair(const GemmView<float>& v1, const GemmView<float>& v2, bool parallel) {
#if LAVA_GEMM_HAVE_X86
  switch (float_path()) {
    case FloatPath::avx512: sgemm_avx512_pair(v1, v2, parallel); return;
    case FloatPath::avx2: sgemm_avx2_pair(v1, v2, parallel); return;
    default: break;
  }
#endif
  sgemm_generic_pair(v1, v2, parallel);
}

double sgemm_kernel_loop(long calls, float* scratch) {
#if LAVA_GEMM_HAVE_X86
  switch (float_path()) {
    case FloatPath::avx512: return sgemm_avx512_kernel_loop(calls, scratch);
    case FloatPath::avx2: return sgemm_avx2_kernel_loop(calls, scratch);
    default: break;
  }
#endif
  return sgemm_generic_kernel_loop(calls, scratch);
}

}  // namespace gemm_detail

namespace {
// The packed path of T: this CPU's float kernel, or the portable double one.
template <class T>
void packed_dispatch(const gemm_detail::GemmView<T>& v, bool parallel) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_detail::sgemm_dispatch(v, parallel);
  } else {
    gemm_detail::dgemm_generic(v, parallel);
  }
}
template <class T>
void packed_dispatch_pair(const gemm_detail::GemmView<T>& v1, const gemm_detail::GemmView<T>& v2, bool parallel) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_detail::sgemm_dispatch_pair(v1, v2, parallel);
  } else {
    gemm_detail::dgemm_generic_pair(v1, v2, parallel);
  }
}
#if LAVA_PROFILE
std::atomic<unsigned long long> g_gemm_flops{0}, g_gemm_threaded_flops{0};
#endif

// Whether a call splits over threads (worth_it: worth_splitting(M, N, K)); a profiling build also counts its 2MNK.
bool count_call([[maybe_unused]] int M, [[maybe_unused]] int N, [[maybe_unused]] int K, bool worth_it) {
  const bool threaded = use_threads(worth_it);
#if LAVA_PROFILE
  const unsigned long long flops = 2ull * unsigned(M) * unsigned(N) * unsigned(K);
  g_gemm_flops.fetch_add(flops, std::memory_order_relaxed);
  if (threaded) g_gemm_threaded_flops.fetch_add(flops, std::memory_order_relaxed);
#endif
  return threaded;
}
}  // namespace

#if LAVA_PROFILE
unsigned long long gemm_flop_count() { return g_gemm_flops.load(std::memory_order_relaxed); }
unsigned long long gemm_threaded_flop_count() { return g_gemm_threaded_flops.load(std::memory_order_relaxed); }
#endif

template <class T>
void gemm(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
          T* C, int ldc) {
  if (M <= 0 || N <= 0) return;
  const bool worth_it = worth_splitting(M, N, K);
  const op_profile::GemmTimer profile(K > 0 && alpha != T(0) ? 2.0 * M * N * K : 0.0, worth_it);
  LAVA_CHECK(ldc >= N, "gemm: ldc {} < N {}", ldc, N);
  if (K <= 0 || alpha == T(0)) {  // nothing to add: C = beta·C
    gemm_detail::scale_c(C, ldc, M, N, beta);
    return;
  }
  LAVA_CHECK(lda >= (trans_a ? M : K) && ldb >= (trans_b ? K : N),
             "gemm: lda {} or ldb {} too small for {}x{}x{} (trans {}{})", lda, ldb, M, N, K, trans_a, trans_b);
  const bool threaded = count_call(M, N, K, worth_it);
  const auto v = gemm_detail::make_view(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  if (gemm_detail::use_direct(M, N, K)) {
    gemm_detail::gemm_direct(v, threaded);
  } else {
    packed_dispatch(v, threaded);
  }
}

// The widest micro-panel of any path (AVX-512: 32 columns), so one size serves whichever path packs.
template <class T>
long gemm_packed_b_size(int K, int N) {
  constexpr long kWidestNR = 32;
  return long(K) * ((long(N) + kWidestNR - 1) / kWidestNR * kWidestNR);
}

template <class T>
void gemm_pack_b(const PackedB<T>& b) {
  const bool worth_it = worth_splitting(double(b.K) * b.N, 1 << 16);
  const op_profile::GemmTimer profile(0.0, worth_it);  // packing is GEMM time with no multiply-adds of its own
  if (b.K <= 0 || b.N <= 0 || gemm_detail::use_direct(2, b.N, b.K)) return;  // such shapes never read it
  auto v = gemm_detail::make_view(false, b.trans, 1, b.N, b.K, T(1), b.B, b.K, b.B, b.ldb, T(0), b.packed, b.N);
  v.pack_b_into = b.packed;
  packed_dispatch(v, use_threads(worth_it));
}

template <class T>
void gemm(bool trans_a, int M, T alpha, const T* A, int lda, const PackedB<T>& b, T beta, T* C, int ldc) {
  const int N = b.N, K = b.K;
  const bool worth_it = worth_splitting(M, N, K);
  const op_profile::GemmTimer profile(M > 0 && alpha != T(0) ? 2.0 * M * N * K : 0.0, worth_it);
  if (M <= 0 || N <= 0 || K <= 0 || alpha == T(0) || gemm_detail::use_direct(M, N, K)) {
    gemm(trans_a, b.trans, M, N, K, alpha, A, lda, b.B, b.ldb, beta, C, ldc);  // no packing on these paths
    return;
  }
  LAVA_CHECK(ldc >= N && lda >= (trans_a ? M : K), "gemm: lda {} or ldc {} too small for {}x{}x{}", lda, ldc, M, N,
             K);
  const bool threaded = count_call(M, N, K, worth_it);
  auto v = gemm_detail::make_view(trans_a, b.trans, M, N, K, alpha, A, lda, b.B, b.ldb, beta, C, ldc);
  v.packed_b = b.packed;
  packed_dispatch(v, threaded);
}

template <class T>
void gemm(const GemmArgs<T>& a) {
  if (a.packed) {
    gemm(a.trans_a, a.M, a.alpha, a.A, a.lda, *a.packed, a.beta, a.C, a.ldc);
  } else {
    gemm(a.trans_a, a.trans_b, a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C, a.ldc);
  }
}

namespace {

// The view of a product that gemm would run on the packed path, split over threads, and whose arguments are valid;
// nullopt otherwise (gemm(args) then runs it, and reports bad arguments).
template <class T>
std::optional<gemm_detail::GemmView<T>> threaded_packed_view(const GemmArgs<T>& a) {
  const PackedB<T>* p = a.packed;
  const bool trans_b = p ? p->trans : a.trans_b;
  const int N = p ? p->N : a.N, K = p ? p->K : a.K, ldb = p ? p->ldb : a.ldb;
  if (a.M <= 0 || N <= 0 || K <= 0 || a.alpha == T(0) || gemm_detail::use_direct(a.M, N, K) ||
      !use_threads(worth_splitting(a.M, N, K)))
    return std::nullopt;
  if (a.ldc < N || a.lda < (a.trans_a ? a.M : K) || (!p && ldb < (trans_b ? K : N))) return std::nullopt;
  auto v = gemm_detail::make_view(a.trans_a, trans_b, a.M, N, K, a.alpha, a.A, a.lda, p ? p->B : a.B, ldb, a.beta,
                                  a.C, a.ldc);
  if (p) v.packed_b = p->packed;
  return v;
}
}  // namespace

template <class T>
void gemm_pair(const GemmArgs<T>& first, const GemmArgs<T>& second) {
  const auto v1 = threaded_packed_view(first), v2 = threaded_packed_view(second);
  if (!v1 || !v2) {
    gemm(first);
    gemm(second);
    return;
  }
  const op_profile::GemmTimer profile(2.0 * v1->M * v1->N * v1->K + 2.0 * v2->M * v2->N * v2->K, true);
  count_call(v1->M, v1->N, v1->K, true);
  count_call(v2->M, v2->N, v2->K, true);
  packed_dispatch_pair(*v1, *v2, true);
}

template <class T>
void gemm_naive(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb,
                T beta, T* C, int ldc) {
  // Accumulates in double so that it can serve as the reference for float and double alike.
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = 0.0;
      for (int k = 0; k < K; ++k) {
        const double a = trans_a ? A[long(k) * lda + i] : A[long(i) * lda + k];
        const double b = trans_b ? B[long(j) * ldb + k] : B[long(k) * ldb + j];
        s += a * b;
      }
      T& c = C[long(i) * ldc + j];
      c = beta == T(0) ? T(double(alpha) * s) : T(double(beta) * double(c) + double(alpha) * s);
    }
  }
}

template void gemm<float>(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int);
template void gemm<double>(bool, bool, int, int, int, double, const double*, int, const double*, int, double, double*,
                           int);
template long gemm_packed_b_size<float>(int, int);
template long gemm_packed_b_size<double>(int, int);
template void gemm_pack_b<float>(const PackedB<float>&);
template void gemm_pack_b<double>(const PackedB<double>&);
template void gemm<float>(bool, int, float, const float*, int, const PackedB<float>&, float, float*, int);
template void gemm<double>(bool, int, double, const double*, int, const PackedB<double>&, double, double*, int);
template void gemm<float>(const GemmArgs<float>&);
template void gemm<double>(const GemmArgs<double>&);
template void gemm_pair<float>(const GemmArgs<float>&, const GemmArgs<float>&);
template void gemm_pair<double>(const GemmArgs<double>&, const GemmArgs<double>&);
template void gemm_naive<float>(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*,
                                int);
template void gemm_naive<double>(bool, bool, int, int, int, double, const double*, int, const double*, int, double,
                                 double*, int);

}  // namespace lava
