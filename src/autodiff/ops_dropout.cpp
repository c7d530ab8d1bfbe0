// Inverted dropout: y_i = x_i · m_i with m_i = [u_i ≥ p] / (1 − p), u_i = rng.uniform(i); dx_i += dy_i · m_i.
// The mask is a pure function of (seed, stream, i), so it does not depend on the thread count.
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "core/parallel.hpp"

namespace lava {

template <class T>
Var<T> dropout(Var<T> x, T p, const CounterRng& rng, bool training) {
  LAVA_PROFILE_OP("dropout");
  LAVA_CHECK(p >= T(0) && p < T(1), "dropout probability {} outside [0, 1)", double(p));
  if (!training || p == T(0)) return x;
  const int64_t n = x.numel();
  Var<T> y = x.tape->make_output(x.shape(), x);
  T* m = x.tape->template scratch<T>(n);
  const T keep_scale = T(1) / (T(1) - p);
  const T* xv = x.val();
  T* yv = y.val();
#pragma omp parallel for schedule(static) if (n >= kParallelMin / 8)
  for (int64_t i = 0; i < n; ++i) {
    m[i] = rng.uniform(uint64_t(i)) >= double(p) ? keep_scale : T(0);
    yv[i] = xv[i] * m[i];
  }
  if (y.needs_grad())
    x.tape->on_backward([x, y, m, n] {
      T* dx = x.grad();
      const T* dy = y.grad();
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
      for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * m[i];
    });
  return y;
}

template Var<float> dropout(Var<float>, float, const CounterRng&, bool);
template Var<double> dropout(Var<double>, double, const CounterRng&, bool);

}  // namespace lava
