#pragma once
// GEMM test problems: random op(A), op(B), C with padded rows, and the check of a result against gemm_naive with
// the standard rounding bound (tests/gemm/test_gemm.cpp, test_gemm_packed_driver.cpp).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gemm/gemm.hpp"

// Small deterministic generator (splitmix64) so the test data never depend on the standard library.
struct TestRng {
  std::uint64_t s;
  double uniform(double lo, double hi) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return lo + (hi - lo) * double(z >> 11) * 0x1.0p-53;
  }
};

template <class T>
std::vector<T> random_buffer(std::size_t n, TestRng& rng) {
  std::vector<T> v(n);
  for (auto& x : v) x = T(rng.uniform(-1.0, 1.0));
  return v;
}

// One problem: op(A) M×K, op(B) K×N, C M×N, each stored with `pad` extra elements per row.
template <class T>
struct Problem {
  bool ta, tb;
  int M, N, K, lda, ldb, ldc;
  std::vector<T> A, B, C;

  Problem(bool ta_, bool tb_, int M_, int N_, int K_, int pad, TestRng& rng)
      : ta(ta_), tb(tb_), M(M_), N(N_), K(K_) {
    lda = (ta ? M : K) + pad;
    ldb = (tb ? K : N) + pad;
    ldc = N + pad;
    A = random_buffer<T>(std::size_t(ta ? K : M) * lda, rng);
    B = random_buffer<T>(std::size_t(tb ? N : K) * ldb, rng);
    C = random_buffer<T>(std::size_t(M) * ldc, rng);
  }

  std::vector<T> run(T alpha, T beta, const std::vector<T>& c0) const {
    std::vector<T> c = c0;
    lava::gemm<T>(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, c.data(), ldc);
    return c;
  }
};

// Checks got against the naive reference with the standard bound
//   |got − ref| ≤ 2(K+2)·eps·(|alpha|·Σ_k|a||b| + |beta·c0|) + tiny,
// and that the padding columns of C (j ≥ N) were not touched.
template <class T>
int count_mismatches(const Problem<T>& p, T alpha, T beta, const std::vector<T>& c0, const std::vector<T>& got) {
  std::vector<T> ref = c0, mag(c0.size());
  lava::gemm_naive<T>(p.ta, p.tb, p.M, p.N, p.K, alpha, p.A.data(), p.lda, p.B.data(), p.ldb, beta, ref.data(), p.ldc);
  std::vector<T> absA(p.A.size()), absB(p.B.size());
  for (std::size_t i = 0; i < p.A.size(); ++i) absA[i] = std::fabs(p.A[i]);
  for (std::size_t i = 0; i < p.B.size(); ++i) absB[i] = std::fabs(p.B[i]);
  lava::gemm_naive<T>(p.ta, p.tb, p.M, p.N, p.K, std::fabs(alpha), absA.data(), p.lda, absB.data(), p.ldb, T(0),
                      mag.data(), p.ldc);
  const double eps = std::numeric_limits<T>::epsilon();
  int bad = 0;
  for (int i = 0; i < p.M; ++i) {
    for (int j = 0; j < p.ldc; ++j) {
      const std::size_t at = std::size_t(i) * p.ldc + j;
      if (j >= p.N) {
        // bit-compare so that a NaN left in the padding by the caller still counts as untouched
        if (std::memcmp(&got[at], &c0[at], sizeof(T)) != 0) ++bad;
        continue;
      }
      const double c_old = beta == T(0) ? 0.0 : std::fabs(double(beta) * c0[at]);
      const double tol = 2.0 * (p.K + 2) * eps * (double(mag[at]) + c_old) + 1e-30;
      if (!(std::fabs(double(got[at]) - double(ref[at])) <= tol)) ++bad;
    }
  }
  return bad;
}

template <class T>
std::vector<T> nan_filled(std::size_t n) {
  return std::vector<T>(n, std::numeric_limits<T>::quiet_NaN());
}
