// lava::run_gemm_bench (the harness behind `lava bench gemm`): argument checks, one row per combination whose timed
// products are checked against a double-precision reference (a check that fails for a wrong product), and an
// environment left as it was after loading OpenBLAS; the kernel loop behind kernel_loop_ratio. The GEMM itself is
// tested in test_gemm.cpp.
#include <doctest/doctest.h>

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "gemm/gemm_bench.hpp"
#include "gemm/gemm_kernels.hpp"
#include "gemm/team_rate.hpp"

TEST_CASE("gemm bench: rejects bad arguments and reports one row per combination") {
  CHECK_THROWS_AS(lava::run_gemm_bench({}, {1}, {"NN"}, 1), lava::UsageError);
  CHECK_THROWS_AS(lava::run_gemm_bench({{8, 0, 8}}, {1}, {"NN"}, 1), lava::UsageError);
  CHECK_THROWS_AS(lava::run_gemm_bench({{8, 8, 8}}, {0}, {"NN"}, 1), lava::UsageError);
  CHECK_THROWS_AS(lava::run_gemm_bench({{8, 8, 8}}, {1}, {"NX"}, 1), lava::UsageError);
  CHECK_THROWS_AS(lava::run_gemm_bench({{8, 8, 8}}, {1}, {"NN"}, 0), lava::UsageError);
  // Loading OpenBLAS clears OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE and sets OPENBLAS_THREAD_TIMEOUT only while it
  // loads: the process's environment is the same afterwards.
  const auto env_of = [] {
    std::vector<std::string> v;
    for (const char* name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_THREAD_TIMEOUT"}) {
      const char* x = std::getenv(name);
      v.push_back(x ? std::string("=") + x : "unset");
    }
    return v;
  };
  const std::vector<std::string> env_before = env_of();
  const auto rows = lava::run_gemm_bench({{8, 9, 10}}, {1}, {"NN", "TN"}, 1);
  CHECK(env_of() == env_before);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].m == 8);
  CHECK(rows[1].n == 9);
  CHECK(rows[1].k == 10);
  CHECK(rows[1].trans == "TN");
  CHECK(rows[1].threads == 1);
  CHECK(rows[1].gflops > 0.0);
  CHECK(rows[1].peak_ratio > 0.0);
  CHECK((rows[1].openblas_gflops > 0.0 || rows[1].openblas_gflops == -1.0));
  CHECK(rows[1].packed_gflops > 0.0);
  // Every product the rows timed (plain, packed, OpenBLAS's) is within the rounding bound of the reference.
  CHECK(rows[0].error_ratio <= 1.0);
  CHECK(rows[1].error_ratio <= 1.0);
  const auto more = lava::run_gemm_bench({{37, 29, 300}}, {2}, {"NT", "TT"}, 1);  // edge tiles, two threads
  REQUIRE(more.size() == 2);
  for (const auto& row : more) CHECK(row.error_ratio <= 1.0);

  // The check itself fails for a wrong answer. C = op(A)·op(B) in float, A 3×4 (read as 4×3 transposed), B 4×5.
  const int M = 3, N = 5, K = 4;
  std::vector<float> A(M * K), B(K * N), C(M * N, 0.f);
  for (int i = 0; i < M * K; ++i) A[size_t(i)] = 0.25f * float(i % 7) - 0.6f;
  for (int i = 0; i < K * N; ++i) B[size_t(i)] = 0.5f - 0.125f * float(i % 9);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) C[size_t(i * N + j)] += A[size_t(k * M + i)] * B[size_t(k * N + j)];
  CHECK(lava::gemm_error_ratio(true, false, M, N, K, A.data(), M, B.data(), N, C.data(), N) <= 1.0);
  CHECK(lava::gemm_error_ratio(false, false, M, N, K, A.data(), K, B.data(), N, C.data(), N) > 1.0);  // A untransposed
  std::vector<float> off = C;
  off[size_t(M * N - 1)] += 1e-3f;  // one corner entry off by far more than rounding
  CHECK(lava::gemm_error_ratio(true, false, M, N, K, A.data(), M, B.data(), N, off.data(), N) > 1.0);
  off = C;
  off[0] = std::nanf("");
  CHECK(lava::gemm_error_ratio(true, false, M, N, K, A.data(), M, B.data(), N, off.data(), N) > 1.0);
}

TEST_CASE("gemm bench: each path's kernel loop adds one Â·B̂ tile a call and counts its flops") {
  // Every operand 2^-10: each call adds kc · 2^-20 = 2^-13 to each of the tile's MR·NR C elements (exact in float),
  // and nothing else changes. The tile is wherever the path put it; the count of changed values gives MR·NR.
  using KernelLoop = double (*)(long, float*);
  std::vector<std::pair<const char*, KernelLoop>> paths{{"generic", lava::gemm_detail::sgemm_generic_kernel_loop}};
#if LAVA_GEMM_HAVE_X86
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    paths.emplace_back("avx2", lava::gemm_detail::sgemm_avx2_kernel_loop);
  if (__builtin_cpu_supports("avx512f")) paths.emplace_back("avx512", lava::gemm_detail::sgemm_avx512_kernel_loop);
#endif
  for (const auto& [name, loop] : paths) {
    std::vector<float> scratch(lava::gemm_detail::kKernelLoopScratch, 0x1p-10f);
    const long calls = 3;
    const double flops = loop(calls, scratch.data());
    long tile = 0, other = 0;
    for (float x : scratch) {
      tile += x == 0x1p-10f + 3 * 0x1p-13f;
      other += x != 0x1p-10f && x != 0x1p-10f + 3 * 0x1p-13f;
    }
    CHECK_MESSAGE(other == 0, name);
    CHECK_MESSAGE(tile >= 6 * 8, name);
    CHECK_MESSAGE(flops == 2.0 * double(tile) * lava::gemm_detail::kKernelLoopK * calls, name);
  }
  CHECK(lava::measure_kernel_loop_gflops(1, 1, 0.005) > 0.0);
  CHECK(lava::measure_kernel_loop_ratio(1, 1) > 0.0);
}

// The yardsticks' team rate is the sum of the threads' own rates, not threads × the slowest one's: every thread
// repeats its work until the common deadline. A stand-in work whose thread 0 sleeps 1 ms a call and thread 1 16 ms
// makes thread 0 do many more calls (16× on an idle machine; with equal shares, the same number). The checks are on
// counts and on the wall time measured around the call, never on absolute rates, so that a loaded machine whose
// sleeps overrun by up to 14 ms still passes: (16 + d) / (1 + d) > 2 while d < 14.
TEST_CASE("gemm bench: a team's rate is the sum of its threads' rates") {
  int team = 0;
  std::atomic<long> calls[2] = {0, 0};
  const auto work = [&](long units) {
    const int t = omp_get_thread_num();
    if (t == 0) team = omp_get_num_threads();
    std::this_thread::sleep_for(std::chrono::milliseconds((t == 0 ? 1 : 16) * units));
    ++calls[t & 1];
    return 1e6 * double(units);
  };
  // rate = Σ flops / elapsed, with elapsed between the deadline and the wall time around the call.
  const auto check_rate = [&](int threads, double seconds) {
    calls[0] = calls[1] = 0;
    const double t0 = omp_get_wtime();
    const double rate = lava::team_rate_gflops(threads, 1, seconds, work);
    const double wall = omp_get_wtime() - t0;
    const double flops = 1e6 * double(calls[0] + calls[1]);
    CHECK(team == threads);
    CHECK(rate >= flops / wall * 1e-9 * (1 - 1e-9));
    CHECK(rate <= flops / seconds * 1e-9 * (1 + 1e-9));
  };
  check_rate(1, 0.1);
  CHECK(calls[1] == 0);
  check_rate(2, 0.2);
  CHECK(calls[1] >= 1);
  CHECK(calls[0] > 2 * calls[1]);  // equal shares would give calls[0] == calls[1]
  calls[0] = calls[1] = 0;
  CHECK(lava::median_team_rate_gflops(2, 3, 0.1, work) > 0.0);
  CHECK(calls[0] > 2 * calls[1]);
}
