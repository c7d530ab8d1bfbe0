#pragma once
// Elementwise unary kernels: y[i] = f(x[i]);  dx[i] += dy[i] · f'(x[i]) (written with y where that is cheaper).
// Buffers: x, y, dx, dy all (n).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"
#include "tensor/special_math.hpp"
#include "core/vec_math.hpp"

namespace lava::kernels {

// An Fn with an array form (the vec_math functions) runs it on blocks of kUnaryBlock; values do not depend on the
// block boundaries, so neither do results on the thread count.
constexpr int64_t kUnaryBlock = 4096;

template <class T, class Fn>
void unary_forward(T* y, const T* x, int64_t n) {
  if constexpr (requires { Fn::array(y, x, n); }) {
    const int64_t blocks = (n + kUnaryBlock - 1) / kUnaryBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t k = 0; k < blocks; ++k)
      Fn::array(y + k * kUnaryBlock, x + k * kUnaryBlock, std::min(kUnaryBlock, n - k * kUnaryBlock));
  } else {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) y[i] = Fn::f(x[i]);
  }
}

template <class T, class Fn>
void unary_backward(T* dx, const T* x, const T* y, const T* dy, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * Fn::df(x[i], y[i]);
}

// Each Fn gives f(x) and f'(x) in terms of x and y = f(x).
struct TanhFn {  // tanh' = 1 − y²
  template <class T> static T f(T x) { return std::tanh(x); }
  template <class T> static void array(T* y, const T* x, int64_t n) { vmath::tanh_array(y, x, n); }
  template <class T> static T df(T, T y) { return T(1) - y * y; }
};
struct SigmoidFn {  // σ(x) = 1/(1+e^{−x}); σ' = y(1 − y)
  template <class T> static T f(T x) { return T(1) / (T(1) + std::exp(-x)); }
  template <class T> static void array(T* y, const T* x, int64_t n) { vmath::sigmoid_array(y, x, n); }
  template <class T> static T df(T, T y) { return y * (T(1) - y); }
};
struct ReluFn {  // relu' = [x > 0]
  template <class T> static T f(T x) { return x > T(0) ? x : T(0); }
  template <class T> static T df(T x, T) { return x > T(0) ? T(1) : T(0); }
};
struct ExpFn {  // exp' = y
  template <class T> static T f(T x) { return std::exp(x); }
  template <class T> static void array(T* y, const T* x, int64_t n) { vmath::exp_array(y, x, n); }
  template <class T> static T df(T, T y) { return y; }
};
struct LogFn {  // log' = 1/x
  template <class T> static T f(T x) { return std::log(x); }
  template <class T> static T df(T x, T) { return T(1) / x; }
};
struct SoftplusFn {  // log(1+e^x) = max(x,0) + log1p(e^{−|x|}) (no overflow); softplus' = σ(x)
  template <class T> static T f(T x) { return (x > T(0) ? x : T(0)) + std::log1p(std::exp(-std::abs(x))); }
  template <class T> static T df(T x, T) { return T(1) / (T(1) + std::exp(-x)); }
};
struct LgammaFn {  // (log Γ)' = ψ
  template <class T> static T f(T x) { return T(log_gamma(double(x))); }
  template <class T> static T df(T x, T) { return T(digamma_fn(double(x))); }
};
struct DigammaFn {  // ψ' = trigamma
  template <class T> static T f(T x) { return T(digamma_fn(double(x))); }
  template <class T> static T df(T x, T) { return T(trigamma_fn(double(x))); }
};
struct SquareFn {  // (x²)' = 2x
  template <class T> static T f(T x) { return x * x; }
  template <class T> static T df(T x, T) { return T(2) * x; }
};

}  // namespace lava::kernels
