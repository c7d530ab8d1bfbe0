#pragma once
// The GEMM paths behind lava::gemm, chosen at run time (gemm.cpp):
//   C[M×N] = beta·C + alpha · Â[M×K] · B̂[K×N]   (GemmView strides; M, N, K ≥ 1, alpha ≠ 0).
// The x86 kernels are compiled with `#pragma GCC target` in their own translation units, so they build under any
// -march and are only called when the CPU reports the instruction set (__builtin_cpu_supports).
#include "gemm/gemm_view.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define LAVA_GEMM_HAVE_X86 1
#else
#define LAVA_GEMM_HAVE_X86 0
#endif

namespace lava::gemm_detail {

enum class FloatPath { generic, avx2, avx512 };

// The path lava::gemm<float> takes on this CPU (avx512 needs AVX-512F, avx2 needs AVX2 and FMA).
FloatPath float_path();
const char* float_path_name(FloatPath p);

// Portable (GCC vector extensions; gemm_generic.cpp): every double GEMM, and float GEMM without AVX2+FMA.
void sgemm_generic(const GemmView<float>& v, bool parallel);   // 6×16 tile (6×8 without AVX)
void dgemm_generic(const GemmView<double>& v, bool parallel);  // 6×8 tile (6×4 without AVX)
// Two independent products in one parallel region where they can share it (gemm_packed.hpp's gemm_packed_pair):
// the bits of the two calls one after the other.
void sgemm_generic_pair(const GemmView<float>& v1, const GemmView<float>& v2, bool parallel);
void dgemm_generic_pair(const GemmView<double>& v1, const GemmView<double>& v2, bool parallel);

#if LAVA_GEMM_HAVE_X86
void sgemm_avx2(const GemmView<float>& v, bool parallel);    // 6×16 ymm micro-kernel
void sgemm_avx512(const GemmView<float>& v, bool parallel);  // 12×32 zmm micro-kernel
void sgemm_avx2_pair(const GemmView<float>& v1, const GemmView<float>& v2, bool parallel);
void sgemm_avx512_pair(const GemmView<float>& v1, const GemmView<float>& v2, bool parallel);
#endif

// Each path's micro-kernel alone, `calls` times over operands hot in L1 (kernel_loop in ukernel_simd.hpp): the
// ceiling of its GEMM, for `lava bench gemm`. Returns the flops done. scratch: kKernelLoopScratch floats of small
// finite values (64-byte aligned for a figure that compares with the packed buffers'). Sized for the widest tile,
// AVX-512's 12×32: Â (kc, 12) | B̂ (kc, 32) | C (12, 32).
constexpr int kKernelLoopK = 128;
constexpr int kKernelLoopScratch = (12 + 32) * kKernelLoopK + 12 * 32;
double sgemm_generic_kernel_loop(long calls, float* scratch);
#if LAVA_GEMM_HAVE_X86
double sgemm_avx2_kernel_loop(long calls, float* scratch);
double sgemm_avx512_kernel_loop(long calls, float* scratch);
#endif
// The loop of this CPU's float path (float_path()).
double sgemm_kernel_loop(long calls, float* scratch);

}  // namespace lava::gemm_detail
