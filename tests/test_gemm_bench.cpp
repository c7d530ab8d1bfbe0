// lava::run_gemm_bench (the harness behind `lava bench gemm`): argument checks, one row per combination, and an
// environment left as it was after loading OpenBLAS. The GEMM itself is tested in test_gemm.cpp.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "gemm/gemm_bench.hpp"

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
}
