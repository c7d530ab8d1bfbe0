// The yardsticks of the GEMM benchmark: this machine's peak float FMA throughput,
//   peak = Σ_thread iters_t · chains · lanes · 2 flops / wall seconds (every thread runs to a common deadline:
//   team_rate.hpp),
// where each thread updates `chains` independent accumulators acc ← acc·x + y (enough chains to cover
// FMA latency × FMA ports, so throughput, not latency, is measured); and the GEMM's micro-kernel alone on operands
// hot in L1 (kernel_loop, ukernel_simd.hpp), the most a loop nest around it can reach.
#include <omp.h>

#include <algorithm>

#include "gemm/gemm_bench.hpp"
#include "gemm/gemm_kernels.hpp"
#include "gemm/team_rate.hpp"

#if LAVA_GEMM_HAVE_X86
#include <immintrin.h>
#endif

namespace lava {

namespace {

#if LAVA_GEMM_HAVE_X86
// 24 zmm chains × 16 lanes per iteration.
__attribute__((target("avx512f"))) float fma_chains_zmm(long iters, int* flops_per_iter) {
  constexpr int kChains = 24;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * float(i));
  const __m512 x = _mm512_set1_ps(0.9999f), y = _mm512_set1_ps(1e-6f);
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  *flops_per_iter = kChains * 16 * 2;
  return lanes[0] + lanes[15];
}

// 12 ymm chains × 8 lanes per iteration (leaves the remaining ymm registers for x and y).
__attribute__((target("avx2,fma"))) float fma_chains_ymm(long iters, int* flops_per_iter) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * float(i));
  const __m256 x = _mm256_set1_ps(0.9999f), y = _mm256_set1_ps(1e-6f);
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  *flops_per_iter = kChains * 8 * 2;
  return lanes[0] + lanes[7];
}
#endif

// Scalar fallback: 8 chains; the compiler may vectorize nothing here, which is the point on such a machine.
float fma_chains_scalar(long iters, int* flops_per_iter) {
  constexpr int kChains = 8;
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = 0.001f * float(i);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * 0.9999f + 1e-6f;
  *flops_per_iter = kChains * 2;
  float s = 0.0f;
  for (float a : acc) s += a;
  return s;
}

float fma_chains(long iters, int* flops_per_iter) {
#if LAVA_GEMM_HAVE_X86
  switch (gemm_detail::float_path()) {
    case gemm_detail::FloatPath::avx512: return fma_chains_zmm(iters, flops_per_iter);
    case gemm_detail::FloatPath::avx2: return fma_chains_ymm(iters, flops_per_iter);
    default: break;
  }
#endif
  return fma_chains_scalar(iters, flops_per_iter);
}

float g_sink = 0.0f;  // keeps the chains' results alive

// 64 iterations of the FMA chains per unit, so that a unit is comparable in length to a kernel call.
double fma_chains_flops(long units) {
  int flops_per_iter = 0;
  const float s = fma_chains(units * 64, &flops_per_iter);
#pragma omp atomic
  g_sink += s;
  return double(units) * 64 * flops_per_iter;
}

// `calls` calls of this CPU's micro-kernel on its own thread's operands, hot in L1.
double kernel_loop_flops(long calls) {
  alignas(64) static thread_local float scratch[gemm_detail::kKernelLoopScratch];
  std::fill(scratch, scratch + gemm_detail::kKernelLoopScratch, 1e-3f);  // C grows by 1.3e-4 a call: no subnormals
  return gemm_detail::sgemm_kernel_loop(calls, scratch);
}

}  // namespace

double measure_fma_peak_gflops(int threads, int runs_wanted, double run_seconds) {
  return median_team_rate_gflops(threads, runs_wanted, run_seconds, fma_chains_flops);
}

double measure_kernel_loop_gflops(int threads, int runs_wanted, double run_seconds) {
  return median_team_rate_gflops(threads, runs_wanted, run_seconds, kernel_loop_flops);
}

std::string gemm_kernel_name() { return gemm_detail::float_path_name(gemm_detail::float_path()); }

}  // namespace lava
