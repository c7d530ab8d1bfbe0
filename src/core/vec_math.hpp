#pragma once
// exp, tanh and the logistic σ on 8 or 16 float lanes, and the array loops the kernels use them through.
//
// Why: glibc's scalar expf and tanhf (tanhf calls expm1f) take one element a call, and a training step evaluates
// them on every LSTM gate of every time step and on every logit of the enumerated output layer (B·T·S·V of them);
// GCC will not vectorise a libm call or a floating-point compare under the default -ftrapping-math. GCC's vector
// extensions say the vector code directly: AVX-512 (16 lanes) or AVX2 (8) under -march=native, SSE or scalar code on
// other targets, the same arithmetic in every lane everywhere.
// The array loops take 16 lanes at a time where the target has AVX-512, then 8: twice the elements an instruction
// for the exp of a row of logits (most of the enumerated output layer's time outside its GEMMs); a sum keeps its 8
// running lane sums and adds a block of 16 as its two halves, so no result changes with the width. Without AVX-512
// they take 8 at a time only: there GCC lowers 16-lane compares and selects element by element, which makes a
// 16-lane loop several times slower than an 8-lane one, for the same bits.
//   exp x:  x = n ln2 + r (Cody–Waite, |r| ≤ ln2/2, n rounded by adding 1.5·2^23), e^r by Cephes' degree-6 expf
//           polynomial, 2^n from the exponent bits; x is clamped to [−87.3, 88.37] (no inf, no denormal scale).
//   tanh x: x(1 + z P(z)), z = x², the Taylor series to x^13 for |x| < 0.4 (no cancellation near 0); else
//           sign(x)·(1 − 2/(e^{2|x|} + 1)) with |x| clamped to 10 (tanh 10 rounds to 1 in float).
//   σ(x)  = 1/(1 + e^{−x}).
// The polynomials and the reduction use FMA where the target has it (mul_add): one rounding and one instruction per
// step instead of two.
// Accuracy against double-precision libm over a dense sweep (tests/core/test_vec_math.cpp): exp ≤ 1.1 ulp,
// tanh ≤ 2 ulp, σ ≤ 3 ulp (relative, where σ is not below 1e-37). A value takes the same lanes whether it sits in a
// full block of 8 or in the tail (the tail is padded into a block), so no result depends on how a loop is split over
// threads.
// The double instantiations are plain libm loops: gradient checks run in double and see the exact functions.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__FMA__) && defined(__AVX__)
#include <immintrin.h>
#endif

namespace lava::vmath {

using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = int32_t __attribute__((vector_size(32)));
using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = int32_t __attribute__((vector_size(64)));
constexpr int64_t kLanes = 8;
#if defined(__AVX512F__)
constexpr bool kWideBlocks = true;  // the array loops also take blocks of 16 lanes (one zmm register)
#else
constexpr bool kWideBlocks = false;
#endif
// A block of the max loops: 16 lanes with AVX-512, else 8 (max is exact, so the width cannot change a result).
using MaxBlock = std::conditional_t<kWideBlocks, f32x16, f32x8>;
constexpr int64_t kMaxBlockLanes = kWideBlocks ? 2 * kLanes : kLanes;

// The integer vector of a float vector's width (the exponent bits of exp).
template <class F>
struct IntVec;
template <>
struct IntVec<f32x8> {
  using type = i32x8;
};
template <>
struct IntVec<f32x16> {
  using type = i32x16;
};

template <class F = f32x8>
inline F splat(float a) {
  return F{} + a;
}
// a·b + c, rounded once where the target has FMA (the build's -ffp-contract=off never fuses on its own, so the
// -O1 tests and the -O3 library compute the same bits; only machines without FMA round twice).
inline f32x8 mul_add(f32x8 a, f32x8 b, f32x8 c) {
#if defined(__FMA__) && defined(__AVX__)
  return (f32x8)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return a * b + c;
#endif
}
inline f32x8 low_half(f32x16 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
inline f32x8 high_half(f32x16 v) { return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); }
// 16 lanes: one zmm FMA with AVX-512, else two 8-lane ones; every lane rounds as in the 8-lane form either way.
inline f32x16 mul_add(f32x16 a, f32x16 b, f32x16 c) {
#if defined(__AVX512F__)
  return (f32x16)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#else
  const f32x8 lo = mul_add(low_half(a), low_half(b), low_half(c));
  const f32x8 hi = mul_add(high_half(a), high_half(b), high_half(c));
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#endif
}
template <class F = f32x8>
inline F load(const float* p) {
  F v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class F>
inline void store(float* p, F v) {
  std::memcpy(p, &v, sizeof v);
}
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

// F: f32x8 or f32x16 (the same arithmetic in every lane, so a value's result does not depend on the width).
template <class F>
inline F exp_v(F x) {
  x = x < -87.3f ? splat<F>(-87.3f) : x;
  x = x > 88.37f ? splat<F>(88.37f) : x;  // n ≤ 127: 2^n stays a normal float
  const F n = mul_add(x, splat<F>(1.44269504088896341f), splat<F>(12582912.f)) - 12582912.f;
  // ln 2 = 0.693359375 − 2.12194440e-4 (hi exact)
  const F r = mul_add(n, splat<F>(2.12194440e-4f), mul_add(n, splat<F>(-0.693359375f), x));
  F y = splat<F>(1.9875691500e-4f);
  y = mul_add(y, r, splat<F>(1.3981999507e-3f));
  y = mul_add(y, r, splat<F>(8.3334519073e-3f));
  y = mul_add(y, r, splat<F>(4.1665795894e-2f));
  y = mul_add(y, r, splat<F>(1.6666665459e-1f));
  y = mul_add(y, r, splat<F>(5.0000001201e-1f));
  y = mul_add(y, r * r, r + 1.f);
  using I = typename IntVec<F>::type;
  const I bits = (__builtin_convertvector(n, I) + 127) << 23;  // 2^n, n ∈ [−126, 128)
  return y * (F)bits;  // vector casts reinterpret the bits
}

template <class F>
inline F tanh_v(F x) {
  using I = typename IntVec<F>::type;
  const I xb = (I)x;
  const I sign = xb & int32_t(0x80000000u);
  F ax = (F)(xb & 0x7fffffff);
  ax = ax > 10.f ? splat<F>(10.f) : ax;
  const F large = 1.f - 2.f / (exp_v(ax + ax) + 1.f);
  const F large_signed = (F)((I)large | sign);
  const F z = x * x;  // tanh x = x (1 − z/3 + 2z²/15 − 17z³/315 + 62z⁴/2835 − 1382z⁵/155925 + 21844z⁶/6081075)
  F p = splat<F>(21844.f / 6081075.f);
  p = mul_add(p, z, splat<F>(-1382.f / 155925.f));
  p = mul_add(p, z, splat<F>(62.f / 2835.f));
  p = mul_add(p, z, splat<F>(-17.f / 315.f));
  p = mul_add(p, z, splat<F>(2.f / 15.f));
  p = mul_add(p, z, splat<F>(-1.f / 3.f));
  const F small = mul_add(x, p * z, x);
  return ax < 0.4f ? small : large_signed;
}

template <class F>
inline F sigmoid_v(F x) {
  return 1.f / (1.f + exp_v(-x));
}

// y[i] = f(x[i]) over n floats, 16 at a time (AVX-512), then 8, then the padded tail; y may equal x. f takes either
// width.
template <class Fn>
inline void map_lanes(float* y, const float* x, int64_t n, Fn f) {
  int64_t i = 0;
  if constexpr (kWideBlocks)
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) store(y + i, f(load<f32x16>(x + i)));
  for (; i + kLanes <= n; i += kLanes) store(y + i, f(load(x + i)));
  if (i < n) store_partial(y + i, f(load_partial(x + i, n - i, 0.f)), n - i);
}

// y[i] = f(x[i]) over n values (y may equal x): float through the vector form fv (any width), double through
// libm's f1.
template <class T, class Fv, class F1>
inline void map_array(T* y, const T* x, int64_t n, Fv fv, F1 f1) {
  if constexpr (sizeof(T) == sizeof(float)) {
    map_lanes(y, x, n, fv);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f1(x[i]);
  }
}

template <class T>
void exp_array(T* y, const T* x, int64_t n) {
  map_array(y, x, n, [](auto v) { return exp_v(v); }, [](T v) { return std::exp(v); });
}
template <class T>
void tanh_array(T* y, const T* x, int64_t n) {
  map_array(y, x, n, [](auto v) { return tanh_v(v); }, [](T v) { return std::tanh(v); });
}
template <class T>
void sigmoid_array(T* y, const T* x, int64_t n) {
  map_array(y, x, n, [](auto v) { return sigmoid_v(v); }, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
}

// max_i x[i] for n ≥ 1 (max is exact, so lane order cannot change the result).
template <class T>
T max_array(const T* x, int64_t n) {
  T m = x[0];
  if constexpr (sizeof(T) == sizeof(float)) {
    MaxBlock acc = splat<MaxBlock>(x[0]);
    int64_t i = 0;
    for (; i + kMaxBlockLanes <= n; i += kMaxBlockLanes) {
      const MaxBlock v = load<MaxBlock>(x + i);
      acc = v > acc ? v : acc;
    }
    for (int64_t l = 0; l < kMaxBlockLanes; ++l) m = acc[l] > m ? acc[l] : m;
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  } else {
    for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  }
  return m;
}

// x[i] += b[i], then max_i x[i] (n ≥ 1), in one pass: the same sums, and max is exact.
template <class T>
T add_then_max(T* x, const T* b, int64_t n) {
  if constexpr (sizeof(T) == sizeof(float)) {
    T m = x[0] + b[0];
    MaxBlock acc = splat<MaxBlock>(m);
    int64_t i = 0;
    for (; i + kMaxBlockLanes <= n; i += kMaxBlockLanes) {
      const MaxBlock v = load<MaxBlock>(x + i) + load<MaxBlock>(b + i);
      store(x + i, v);
      acc = v > acc ? v : acc;
    }
    for (int64_t l = 0; l < kMaxBlockLanes; ++l) m = acc[l] > m ? acc[l] : m;
    for (; i < n; ++i) {
      x[i] += b[i];
      m = x[i] > m ? x[i] : m;
    }
    return m;
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] += b[i];
    return max_array(x, n);
  }
}

// Σ_i e^{x[i] − m}, and, when e is not null, e[i] = e^{x[i] − m} (e may equal x). Float: 8 lane sums added in
// lane order at the end, a fixed order for a given n.
template <class T>
T sum_exp_shifted(T* e, const T* x, T m, int64_t n) {
  if constexpr (sizeof(T) == sizeof(float)) {
    f32x8 acc{};
    int64_t i = 0;
    if constexpr (kWideBlocks)
      for (; i + 2 * kLanes <= n; i += 2 * kLanes) {  // 16 at a time, summed as two blocks of 8: the same order
        const f32x16 v = exp_v(load<f32x16>(x + i) - m);
        if (e) store(e + i, v);
        acc += low_half(v);
        acc += high_half(v);
      }
    for (; i + kLanes <= n; i += kLanes) {
      const f32x8 v = exp_v(load(x + i) - m);
      if (e) store(e + i, v);
      acc += v;
    }
    if (i < n) {
      const f32x8 v = exp_v(load_partial(x + i, n - i, -INFINITY) - m);  // padding lanes give e^{−87.3} → 0 below
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
  map_array(y, x, n, [m, scale](auto v) { return scale * exp_v(v - m); },  // auto: float, either width
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
