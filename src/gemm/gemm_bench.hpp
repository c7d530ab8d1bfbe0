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
  double peak_ratio;       // gflops / the median FMA peak of `threads` sampled between its samples
  double openblas_gflops;  // cblas_sgemm, median over repeats; < 0 if OpenBLAS is not available
  double packed_gflops;    // lava::gemm<float> with op(B) packed beforehand (PackedB): a weight read by many products
  // The worst error of the row's products (plain, packed and OpenBLAS's) at sampled entries of C, over the rounding
  // bound of a float dot product of length k (gemm_error_ratio): ≤ 1 for a correct product in any summation order.
  double error_ratio;
};

// The largest, over the four corners of C and 60 entries spread by a fixed sequence, of
//   |C_ij − c_ij| / (γ_K · Σ_k |op(A)_ik| |op(B)_kj|),   γ_K = K·u / (1 − K·u), u = 2^−24,
// where c_ij = Σ_k op(A)_ik op(B)_kj in double: the standard bound on the rounding error of a float dot product
// of length K (Higham, Accuracy and Stability of Numerical Algorithms, §3.1), which holds for every summation order
// and blocking. A wrong element, index or transpose puts it far above 1. C is M×N with leading dimension ldc;
// op(A) = A or Aᵀ (ta) with leading dimension lda, op(B) likewise.
double gemm_error_ratio(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                        const float* C, int ldc);

// Peak float FMA throughput: `threads` OpenMP threads, each running independent vfmadd chains on the widest vector
// registers this CPU has (zmm with AVX-512F, else ymm with AVX2+FMA, else scalar). GFLOP/s, 2 flops per lane.
// The median of `runs` timed runs of about `run_seconds` each. Every thread runs until a common deadline, so with
// several threads the figure is the sum of the threads' own rates (team_rate.hpp).
double measure_fma_peak_gflops(int threads, int runs = 5, double run_seconds = 0.1);

// The same for the float micro-kernel alone (the inner loop of every GEMM on this CPU), over one packed Â micro-panel
// and one B̂ strip hot in L1, per thread: the ceiling of lava::gemm here. GFLOP/s.
double measure_kernel_loop_gflops(int threads, int runs = 5, double run_seconds = 0.1);

// measure_kernel_loop_gflops / measure_fma_peak_gflops with `threads` threads, medians of `repeats` alternating
// samples of each: how close to the peak lava::gemm's inner loop runs on this machine. Sampled apart from the GEMMs,
// so that this loop, which runs close to the peak, does not disturb the GEMM samples that follow it.
double measure_kernel_loop_ratio(int threads, int repeats);

// The float micro-kernel lava::gemm uses on this CPU, e.g. "avx2 6x16" (for the report header).
std::string gemm_kernel_name();

// The kernel family OpenBLAS chose for this CPU (openblas_get_corename(), with OPENBLAS_CORETYPE unset as in
// run_gemm_bench), e.g. "Haswell" or "Cooperlake"; empty when libopenblas.so.0 cannot be loaded.
std::string openblas_core_name();

// Times every shape × threads × trans combination ({m, n, k} = C is m×n, inner dimension k; minimal leading
// dimensions; alpha = 1, beta = 0), plainly and with op(B) packed once before the timed calls (as a training step
// does for the weights it reads at every time step; the packing is then not part of the figure). Each of `repeats`
// rounds takes one sample (≥ 20 ms, after a warm-up) of the FMA peak, the plain call, the packed call and OpenBLAS,
// in turn; each figure is the median of its samples, so a drift of the machine's speed during the run reaches every
// figure alike. After the timed calls, each of the products is computed once more and checked (error_ratio).
// Restores the OpenMP thread count on return.
// Throws lava::UsageError on an empty list, a dimension < 1, threads < 1, repeats < 1 or a trans not in NN/NT/TN/TT.
std::vector<GemmBenchRow> run_gemm_bench(const std::vector<std::array<int, 3>>& shapes,
                                         const std::vector<int>& threads, const std::vector<std::string>& trans,
                                         int repeats);

}  // namespace lava
