#pragma once
// exp, tanh and the logistic σ on 8 float lanes, and the array loops the kernels use them through.
//
// Why: glibc's scalar expf and tanhf (tanhf calls expm1f) were 16 % of a soft-attention training step and most of
// the non-GEMM time of the enumerated output layer; GCC will not vectorise a libm call or a floating-point compare
// under the default -ftrapping-math. GCC's vector extensions say the vector code directly: AVX2 under
// -march=native here, SSE or scalar code on other targets, the same arithmetic everywhere.
//   exp x:  x = n ln2 + r (Cody–Waite, |r| ≤ ln2/2, n rounded by adding 1.5·2^23), e^r by Cephes' degree-6 expf
//           polynomial, 2^n from the exponent bits; x is clamped to [−87.3, 88.37] (no inf, no denormal scale).
//   tanh x: x(1 + z P(z)), z = x², the Taylor series to x^13 for |x| < 0.4 (no cancellation near 0); else
//           sign(x)·(1 − 2/(e^{2|x|} + 1)) with |x| clamped to 10 (tanh 10 rounds to 1 in float).
//   σ(x)  = 1/(1 + e^{−x}).
// The polynomials and the reduction use FMA where the target has it (mul_add): one rounding and one instruction per
// step instead of two.
// Accuracy against double-precision libm over a dense sweep (tests/test_vec_math.cpp): exp ≤ 1.1 ulp, tanh ≤ 2 ulp,
// σ ≤ 3 ulp (relative, where σ is not below 1e-37). A value takes the same lanes whether it sits in a full block of 8
// or in the tail (the tail is padded into a block), so no result depends on how a loop is split over threads.
// The double instantiations are plain libm loops: gradient checks run in double and see the exact functions.
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__FMA__) && defined(__AVX__)
#include <immintrin.h>
#endif

namespace lava::vmath {

using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = int32_t __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;

inline f32x8 splat(float a) { return f32x8{} + a; }
// a·b + c, rounded once where the target has FMA (the build's -ffp-contract=off never fuses on its own, so the
// -O1 tests and the -O3 library compute the same bits; only machines without FMA round twice).
inline f32x8 mul_add(f32x8 a, f32x8 b, f32x8 c) {
#if defined(__FMA__) && defined(__AVX__)
  return (f32x8)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return a * b + c;
#endif
}
inline f32x8 load(const float* p) {
  f32x8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, f32x8 v) { std::memcpy(p, &v, sizeof v); }
// The first n < 8 lanes from p, the rest padded with `fill`.
inline f32x8 load_partial(const float* p, int64_t n, float fill) {
  float tmp[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) tmp[i] = i < n ? p[i] : fill;
  return load(tmp);
}
inline void store_partial(float* p, f32x8 v, int64_t n) {
  float tmp[kLanes];
  store(tmp, v);
  for (int64_t i = 0; i < n; ++i) p[i] = tmp[i];
}

inline f32x8 exp8(f32x8 x) {
  x = x < -87.3f ? splat(-87.3f) : x;
  x = x > 88.37f ? splat(88.37f) : x;  // n ≤ 127: 2^n stays a normal float
  const f32x8 n = mul_add(x, splat(1.44269504088896341f), splat(12582912.f)) - 12582912.f;
  // ln 2 = 0.693359375 − 2.12194440e-4 (hi exact)
  const f32x8 r = mul_add(n, splat(2.12194440e-4f), mul_add(n, splat(-0.693359375f), x));
  f32x8 y = splat(1.9875691500e-4f);
  y = mul_add(y, r, splat(1.3981999507e-3f));
  y = mul_add(y, r, splat(8.3334519073e-3f));
  y = mul_add(y, r, splat(4.1665795894e-2f));
  y = mul_add(y, r, splat(1.6666665459e-1f));
  y = mul_add(y, r, splat(5.0000001201e-1f));
  y = mul_add(y, r * r, r + 1.f);
  const i32x8 bits = (__builtin_convertvector(n, i32x8) + 127) << 23;  // 2^n, n ∈ [−126, 128)
  return y * (f32x8)bits;  // vector casts reinterpret the bits
}

inline f32x8 tanh8(f32x8 x) {
  const i32x8 xb = (i32x8)x;
  const i32x8 sign = xb & int32_t(0x80000000u);
  f32x8 ax = (f32x8)(xb & 0x7fffffff);
  ax = ax > 10.f ? splat(10.f) : ax;
  const f32x8 large = 1.f - 2.f / (exp8(ax + ax) + 1.f);
  const f32x8 large_signed = (f32x8)((i32x8)large | sign);
  const f32x8 z = x * x;  // tanh x = x (1 − z/3 + 2z²/15 − 17z³/315 + 62z⁴/2835 − 1382z⁵/155925 + 21844z⁶/6081075)
  f32x8 p = splat(21844.f / 6081075.f);
  p = mul_add(p, z, splat(-1382.f / 155925.f));
  p = mul_add(p, z, splat(62.f / 2835.f));
  p = mul_add(p, z, splat(-17.f / 315.f));
  p = mul_add(p, z, splat(2.f / 15.f));
  p = mul_add(p, z, splat(-1.f / 3.f));
  const f32x8 small = mul_add(x, p * z, x);
  return ax < 0.4f ? small : large_signed;
}

inline f32x8 sigmoid8(f32x8 x) { return 1.f / (1.f + exp8(-x)); }

// y[i] = f(x[i]) over n floats, 8 at a time; y may equal x.
template <class F>
inline void map8(float* y, const float* x, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, f(load(x + i)));
  if (i < n) store_partial(y + i, f(load_partial(x + i, n - i, 0.f)), n - i);
}

// y[i] = f(x[i]) over n values (y may equal x): float through the 8-lane form f8, double through libm's f1.
template <class T, class F8, class F1>
inline void map_array(T* y, const T* x, int64_t n, F8 f8, F1 f1) {
  if constexpr (sizeof(T) == sizeof(float)) {
    map8(y, x, n, f8);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f1(x[i]);
  }
}

template <class T>
void exp_array(T* y, const T* x, int64_t n) {
  map_array(y, x, n, exp8, [](T v) { return std::exp(v); });
}
template <class T>
void tanh_array(T* y, const T* x, int64_t n) {
  map_array(y, x, n, tanh8, [](T v) { return std::tanh(v); });
}
template <class T>
void sigmoid_array(T* y, const T* x, int64_t n) {
  map_array(y, x, n, sigmoid8, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
}

// max_i x[i] for n ≥ 1 (max is exact, so lane order cannot change the result).
template <class T>
T max_array(const T* x, int64_t n) {
  T m = x[0];
  if constexpr (sizeof(T) == sizeof(float)) {
    f32x8 acc = splat(x[0]);
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      const f32x8 v = load(x + i);
      acc = v > acc ? v : acc;
    }
    for (int64_t l = 0; l < kLanes; ++l) m = acc[l] > m ? acc[l] : m;
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  } else {
    for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  }
  return m;
}

// Σ_i e^{x[i] − m}, and, when e is not null, e[i] = e^{x[i] − m} (e may equal x). Float: 8 lane sums added in
// lane order at the end, a fixed order for a given n.
template <class T>
T sum_exp_shifted(T* e, const T* x, T m, int64_t n) {
  if constexpr (sizeof(T) == sizeof(float)) {
    f32x8 acc{};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      const f32x8 v = exp8(load(x + i) - m);
      if (e) store(e + i, v);
      acc += v;
    }
    if (i < n) {
      const f32x8 v = exp8(load_partial(x + i, n - i, -INFINITY) - m);  // padding lanes give e^{−87.3} → 0 below
      const i32x8 lane = i32x8{0, 1, 2, 3, 4, 5, 6, 7};
      acc += lane < int32_t(n - i) ? v : f32x8{};
      if (e) store_partial(e + i, v, n - i);
    }
    T s = 0;
    for (int64_t l = 0; l < kLanes; ++l) s += acc[l];
    return s;
  } else {
    T s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T v = std::exp(x[i] - m);
      if (e) e[i] = v;
      s += v;
    }
    return s;
  }
}

// y[i] = scale · e^{x[i] − m}   (y may equal x)
template <class T>
void scaled_exp_shifted(T* y, const T* x, T m, T scale, int64_t n) {
  map_array(y, x, n, [m, scale](auto v8) { return scale * exp8(v8 - m); },  // auto: only float calls it
            [m, scale](T v) { return scale * std::exp(v - m); });
}

// Σ_i a[i]·b[i] with 8 running sums (i mod 8) added in lane order, then the tail: a fixed order for a given n
// (GCC vectorises the 8 sums without reassociating anything).
template <class T>
T dot_fixed_order(const T* a, const T* b, int64_t n) {
  constexpr int64_t kSums = 8;
  T sums[kSums] = {};
  int64_t i = 0;
  for (; i + kSums <= n; i += kSums)
    for (int64_t l = 0; l < kSums; ++l) sums[l] += a[i + l] * b[i + l];
  T s = T(0);
  for (int64_t l = 0; l < kSums; ++l) s += sums[l];
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace lava::vmath
