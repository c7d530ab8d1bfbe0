#pragma once
// The toy of the paper's §2–3 (method.md §3.4), in double precision: one observation, K attention states.
//   features x_i (K×D), prior scores s (K), p = softmax(s)
//   f(c) = softmax(W2 tanh(W1 c + b1) + b2) over C labels, observed label y
//   log_p_soft  = log f(Σ_i p_i x_i)_y                (average the features, then predict)
//   log_p_exact = log Σ_i p_i f(x_i)_y                (predict per state, then average)
//   jensen      = Σ_i p_i log f(x_i)_y                (the hard-attention bound, = ELBO at q = p)
//   posterior   π_i = p_i f(x_i)_y / p(y)
//   ELBO(q)     = Σ_i q_i log f(x_i)_y − KL(q‖p),  q = softmax(λ) fitted by Adam from λ = 0 (uniform q)
//   kl_gap      = log_p_exact − ELBO, which must equal KL(q‖π) (identity_error = |kl_gap − KL(q‖π)|).
#include <string>
#include <vector>

#include "tasks/toy/params.hpp"

namespace lava {

struct ToyTracePoint {
  int step;
  double elbo, kl_gap, kl_q_posterior;
};

struct ToyResult {
  std::vector<double> prior, likelihood, posterior, q;  // (K) each; likelihood_i = f(x_i)_y
  double log_p_soft = 0, log_p_exact = 0, jensen = 0;
  double elbo = 0, kl_q_prior = 0, kl_q_posterior = 0, kl_gap = 0, identity_error = 0;
  double max_identity_error = 0;  // over every optimisation step
  std::vector<ToyTracePoint> trace;  // one point per step (step 0 = uniform q)
  // The scalar example: z ∈ {0, 2} with equal probability, f(z) = z².
  double scalar_f_of_mean = 0, scalar_mean_of_f = 0;
};

struct ToyOptions {
  int steps = 3000;
  double lr = 0.3;
  std::vector<double> init_lambda;  // q's logits before the first step; empty = zeros (uniform q)
};

ToyResult run_toy(const ToyParams& params, const ToyOptions& opt);

}  // namespace lava
