// Portable GEMM kernels: the packed driver (gemm_packed.hpp) with GCC vector-extension types, which compile to
// whatever SIMD the build targets (ymm when the build has AVX, else 16-byte xmm / NEON registers).
// Used for every double GEMM and for float GEMM on CPUs without AVX2+FMA.
//   6 rows × 2 vectors: float 6×16 (AVX) or 6×8; double 6×8 (AVX) or 6×4; 12 accumulator registers either way.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "gemm/gemm_kernels.hpp"
#include "gemm/gemm_view.hpp"

#define LAVA_GEMM_ISA_TU 1
#include "gemm/gemm_packed.hpp"
#include "gemm/ukernel_simd.hpp"

namespace lava::gemm_detail {
namespace {

// One vector register's worth: 32 bytes with AVX, else 16 (wider GCC vectors would be split and change the ABI).
#if defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif

// `Lanes` values of T in one GCC vector; an edge mask is just the number of live lanes.
template <class T, int Lanes>
struct GnuVec {
  using scalar = T;
  typedef T reg __attribute__((vector_size(sizeof(T) * Lanes)));
  using mask = int;
  static constexpr int W = Lanes;
  static reg zero() { return reg{}; }
  // A brace list of equal lanes, which GCC turns into a single broadcast (a loop of lane stores or `reg{} + x`
  // is not recognized, and costs the extra register that makes the 12 accumulators spill).
  static reg set1(T x) { return splat(x, std::make_integer_sequence<int, Lanes>{}); }
  template <int... I>
  static reg splat(T x, std::integer_sequence<int, I...>) {
    return reg{((void)I, x)...};
  }
  static reg load(const T* p) {
    reg r;
    std::memcpy(&r, p, sizeof r);
    return r;
  }
  static reg bcast(const T* p) { return set1(*p); }
  static reg fma(reg a, reg b, reg c) { return a * b + c; }
  static reg mul(reg a, reg b) { return a * b; }
  static void store(T* p, reg x) { std::memcpy(p, &x, sizeof x); }
  static mask make_mask(int n) { return n; }
  static reg load_masked(const T* p, mask n) {
    reg r{};
    for (int i = 0; i < n; ++i) r[i] = p[i];
    return r;
  }
  static void store_masked(T* p, mask n, reg x) {
    for (int i = 0; i < n; ++i) p[i] = x[i];
  }
};

using KernelFloat = SimdKernel<GnuVec<float, kVectorBytes / 4>, 6, 2>;
using KernelDouble = SimdKernel<GnuVec<double, kVectorBytes / 8>, 6, 2>;

// Same cache budget as the AVX2 kernel (gemm_avx2.cpp); for double the k block is halved so that a B̂ strip
// keeps the same byte size.
constexpr PackedBlocking kBlockingFloat{/*kc_max=*/384, /*mc=*/768, /*nc=*/480, /*few_a_panels=*/24,
                                        /*strip_group=*/8};
constexpr PackedBlocking kBlockingDouble{/*kc_max=*/256, /*mc=*/384, /*nc=*/240, /*few_a_panels=*/24,
                                         /*strip_group=*/8};

}  // namespace

void sgemm_generic(const GemmView<float>& v, bool parallel) { gemm_packed<KernelFloat>(v, kBlockingFloat, parallel); }
double sgemm_generic_kernel_loop(long calls, float* scratch) { return kernel_loop<KernelFloat>(calls, scratch); }

void dgemm_generic(const GemmView<double>& v, bool parallel) {
  gemm_packed<KernelDouble>(v, kBlockingDouble, parallel);
}
void sgemm_generic_pair(const GemmView<float>& v1, const GemmView<float>& v2, bool parallel) {
  gemm_packed_pair<KernelFloat>(v1, v2, kBlockingFloat, parallel);
}
void dgemm_generic_pair(const GemmView<double>& v1, const GemmView<double>& v2, bool parallel) {
  gemm_packed_pair<KernelDouble>(v1, v2, kBlockingDouble, parallel);
}

}  // namespace lava::gemm_detail
