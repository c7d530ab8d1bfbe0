#pragma once
// GEMM benchmark: lava::gemm<float> GFLOP/s (2·M·N·K / median seconds) against the machine's measured FMA peak and,
// when libopenblas.so.0 can be loaded at run time, against OpenBLAS's cblas_sgemm. LAVA never links OpenBLAS.
#include <array>
#include <string>
#include <vector>

namespace lava {

struct GemmBenchRow {
  int m, n, k;
  std::string trans;       // "NN", "NT", "TN" or "TT": op(A), op(B)
  int threads;             // OpenMP threads for lava::gemm, and OpenBLAS threads
  double gflops;           // lava::gemm<float>, median over repeats
  double peak_ratio;       // gflops / measure_fma_peak_gflops(threads)
  double openblas_gflops;  // cblas_sgemm, median over repeats; < 0 if OpenBLAS is not available
};

// Peak float FMA throughput: `threads` OpenMP threads, each running independent vfmadd chains on the widest vector
// registers this CPU has (zmm with AVX-512F, else ymm with AVX2+FMA, else scalar). GFLOP/s, 2 flops per lane.
double measure_fma_peak_gflops(int threads);

// The float micro-kernel lava::gemm uses on this CPU, e.g. "avx2 6x16" (for the report header).
std::string gemm_kernel_name();

// Times every shape × threads × trans combination ({m, n, k} = C is m×n, inner dimension k; minimal leading
// dimensions; alpha = 1, beta = 0). Each timing sample runs the GEMM enough times to last ≥ 20 ms; the reported
// figure is the median of `repeats` samples after one warm-up. Restores the OpenMP thread count on return.
// Throws lava::UsageError on an empty list, a dimension < 1, threads < 1, repeats < 1 or a trans not in NN/NT/TN/TT.
std::vector<GemmBenchRow> run_gemm_bench(const std::vector<std::array<int, 3>>& shapes,
                                         const std::vector<int>& threads, const std::vector<std::string>& trans,
                                         int repeats);

}  // namespace lava
