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

#if LAVA_GEMM_HAVE_X86
void sgemm_avx2(const GemmView<float>& v, bool parallel);    // 6×16 ymm micro-kernel
void sgemm_avx512(const GemmView<float>& v, bool parallel);  // 12×32 zmm micro-kernel
#endif

}  // namespace lava::gemm_detail
