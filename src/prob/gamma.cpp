// Gamma sampling (Marsaglia–Tsang) with implicit reparameterisation gradients, and the Gamma quantile op.
#include "prob/gamma.hpp"

#include <cmath>
#include <limits>

#include "autodiff/ops.hpp"
#include "prob/broadcast.hpp"
#include "prob/incomplete_gamma.hpp"
#include "tensor/special_math.hpp"
#include "core/op_profile.hpp"

namespace lava {

namespace {
// A draw costs ~0.1 µs and its gradient 0.1–1 µs (more for large α): threads pay off from about a thousand elements.
constexpr int64_t kGammaParallelMin = 1024;
constexpr uint64_t kCountersPerElement = 64;
constexpr int kMaxAttempts = 31;  // acceptance ≥ 0.95 per attempt for α ≥ 1: 31 rejections have probability < 1e-40
}  // namespace

// log z, z ~ Gamma(α, 1).
//   α ≥ 1: d = α − 1/3, c = 1/√(9d); attempt t: ε = N(0,1), v = (1 + cε)³, u = U(0,1); accept when v > 0 and
//          log u < ε²/2 + d − d·v + d·log v (the squeeze u < 1 − 0.0331ε⁴ first); then z = d·v.
//   α < 1: z = z'·u₀^{1/α} with z' ~ Gamma(α + 1), i.e. log z = log z' + log(u₀)/α.
double gamma_log_draw(double alpha, const CounterRng& rng, uint64_t i) {
  if (!(alpha > 0) || !std::isfinite(alpha)) return std::numeric_limits<double>::quiet_NaN();
  const uint64_t base = i * kCountersPerElement;
  const bool boost = alpha < 1;
  const double a = boost ? alpha + 1 : alpha;
  const double d = a - 1.0 / 3.0, c = 1 / std::sqrt(9 * d);
  double log_z = std::log(d);  // the mode, if every attempt were rejected
  for (int t = 0; t < kMaxAttempts; ++t) {
    const double eps = rng.normal(base + 1 + 2 * uint64_t(t));
    const double w = 1 + c * eps;
    if (w <= 0) continue;
    const double v = w * w * w, u = rng.uniform(base + 2 + 2 * uint64_t(t));
    const double e2 = eps * eps;
    if (u < 1 - 0.0331 * e2 * e2 || std::log(u) < 0.5 * e2 + d - d * v + d * std::log(v)) {
      log_z = std::log(d) + 3 * std::log(w);
      break;
    }
  }
  if (boost) log_z += std::log(rng.uniform(base)) / alpha;
  return log_z;
}

// y[i] = log z_i, z_i ~ Gamma(α_i, 1);  dα[i] += dy[i] · (d log z/dα)(α_i, y[i])   (implicit reparameterisation)
// Buffers: alpha, dalpha, y, dy (n).
template <class T>
Var<T> gamma_log_sample(Var<T> alpha, const CounterRng& rng) {
  LAVA_PROFILE_OP("gamma_log_sample");
  const int64_t n = alpha.numel();
  Var<T> y = alpha.tape->make_output(alpha.shape(), alpha);
  const T* a = alpha.val();
  T* yv = y.val();
#pragma omp parallel for schedule(static) if (n >= kGammaParallelMin)
  for (int64_t i = 0; i < n; ++i) yv[i] = T(gamma_log_draw(double(a[i]), rng, uint64_t(i)));
  if (y.needs_grad())
    alpha.tape->on_backward([alpha, y, n] {
      const T* av = alpha.val();
      const T* yv = y.val();
      const T* dy = y.grad();
      T* da = alpha.grad();
#pragma omp parallel for schedule(dynamic, 64) if (n >= kGammaParallelMin)
      for (int64_t i = 0; i < n; ++i)
        if (dy[i] != T(0))  // skips the series for entries nothing depends on (masked positions)
          da[i] += dy[i] * T(gamma_dlogx_da(double(av[i]), double(yv[i])));
    });
  return y;
}

template <class T>
Var<T> gamma_sample(Var<T> alpha, const CounterRng& rng) {
  LAVA_PROFILE_OP("gamma_sample");
  return exp(gamma_log_sample(alpha, rng));
}

// z[i] = P^{-1}(α, u) (Newton on log z);  dα += dz · z · (d log z/dα)(α, log z),  du += dz / p(z; α)
// with p(z; α) = z^{α−1} e^{−z} / Γ(α).  Buffers: z, dz (n); alpha, u and their gradients broadcast to n.
template <class T>
Var<T> gamma_quantile(Var<T> alpha, Var<T> u) {
  LAVA_PROFILE_OP("gamma_quantile");
  Operands<T, 2> in({alpha, u});
  const int64_t n = in.n;
  Var<T> z = alpha.tape->make_output(in.shape, alpha, u);
  T* zv = z.val();
#pragma omp parallel for schedule(static) if (n >= kGammaParallelMin / 8)
  for (int64_t i = 0; i < n; ++i) zv[i] = T(std::exp(gamma_log_quantile(double(in.at(0, i)), double(in.at(1, i)))));
  if (z.needs_grad()) {
    in.prepare_backward(*alpha.tape);
    alpha.tape->on_backward([in, z, n] {
      const T* zv = z.val();
      const T* dz = z.grad();
#pragma omp parallel for schedule(dynamic, 64) if (n >= kGammaParallelMin)
      for (int64_t i = 0; i < n; ++i) {
        const double a = double(in.at(0, i)), x = double(zv[i]), log_x = std::log(x);
        if (in.grad[0]) in.add_grad(0, i, dz[i] * T(x * gamma_dlogx_da(a, log_x)));
        if (in.grad[1]) in.add_grad(1, i, dz[i] * T(std::exp(log_gamma(a) + x - (a - 1) * log_x)));
      }
      in.finish();
    });
  }
  return z;
}

#define LAVA_INSTANTIATE(T)                                              \
  template Var<T> gamma_log_sample(Var<T>, const CounterRng&);           \
  template Var<T> gamma_sample(Var<T>, const CounterRng&);               \
  template Var<T> gamma_quantile(Var<T>, Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
