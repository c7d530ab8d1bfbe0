// Log-normal sampling and KL through the Gaussian ops (see lognormal.hpp for why that is exact).
#include "prob/lognormal.hpp"

#include "autodiff/ops.hpp"
#include "prob/gaussian.hpp"
#include "core/op_profile.hpp"

namespace lava {

// S = exp(z), z = μ + σε: the backward of exp gives dz += dS·S, then gaussian_sample's dμ += dz, dσ += dz·ε.
template <class T>
Var<T> lognormal_sample(Var<T> mu, Var<T> sigma, const CounterRng& rng) {
  LAVA_PROFILE_OP("lognormal_sample");
  return exp(gaussian_sample(mu, sigma, rng));
}

// KL(q ‖ p) = E_q[log q(S) − log p(S)]; with S = e^z both densities pick up the same Jacobian 1/S, which cancels.
template <class T>
Var<T> kl_lognormal(Var<T> mu_q, Var<T> sigma_q, Var<T> mu_p, Var<T> sigma_p) {
  LAVA_PROFILE_OP("kl_lognormal");
  return kl_gaussian(mu_q, sigma_q, mu_p, sigma_p);
}

#define LAVA_INSTANTIATE(T)                                                 \
  template Var<T> lognormal_sample(Var<T>, Var<T>, const CounterRng&);      \
  template Var<T> kl_lognormal(Var<T>, Var<T>, Var<T>, Var<T>);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
