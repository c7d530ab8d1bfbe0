#pragma once
// The sampled attention variants (variant.hpp): a continuous random object per query, reparameterised, with an
// analytic KL to its prior. Per query (B·T of them, S positions, Hd = the head's memory width):
//   var-dirichlet  z ~ Dir(α_q), α_q = dirichlet_alpha(q's scores), prior Dir(α_p); f reads X z
//                  objective E_q log f(x, z) − KL(Dir(α_q) ‖ Dir(α_p))  (one sample; --warm-start: first the
//                  Jensen bound E_{Dir(α_p)} log f with z from the prior, as the authors needed, paper-notes §1.5)
//   gauss-ctx      c ~ N(μ, diag σ²) in the head's memory space, μ = Σ_i p_i U_i (the soft context),
//                  log σ = W2 tanh(W1 μ + b1) + b2; prior N(mean_i U_i, I) or N(0, I) (Bahuleyan et al. 2018)
//   bam-weibull    S_i ~ Weibull(k, λ_i), λ_i = p_i / Γ(1 + 1/k) so E S_i = p_i; w = S / Σ S;
//                  prior Gamma(α_i, β): α_i = β π_i (contextual) or α (fixed)              (Fan et al. 2020)
//   bam-lognormal  log S_i ~ N(log p_i − σ_q²/2, σ_q²); w = S / Σ S = softmax(log p + σ_q ε);
//                  prior log S_i ~ N(log π_i or 0, σ_p²)
// with p = the prior's softmax and π = softmax_i g(U_i) the contextual prior (attention/variant_params.hpp).
// gauss-ctx and bam-* train log f − w·KL with w = --att-kl (default 0.1 for gauss-ctx, as Bahuleyan et al.; 1 for
// BAM) times an optional tanh ramp; every reported ELBO uses weight 1, so it is a true lower bound.
//
// Evaluation draws K = eval_samples latents per query from the posterior and reports, per token,
//   log p̂(y|x) = log (1/K) Σ_k f(x, z_k)_y p(z_k) / q(z_k)   (importance-weighted; E log p̂ ≤ log p(y|x), → as K grows)
//   ELBO ≈ (1/K) Σ_k log f(x, z_k)_y − KL(q ‖ p)               (analytic KL)
// so kl_gap = log p̂ − ELBO estimates KL(q ‖ p(z|x,y)); no exact posterior exists to check it against.
#include "attention/objective.hpp"

namespace lava {

struct ContinuousTerms {
  Var<float> per_token;  // (B, T) the training objective (KL weighted)
  Var<float> value;      // (B, T) its value with KL weight 1 (the ELBO estimate; the Jensen bound in warm start)
  Var<float> kl;         // (B, T) KL(q ‖ p); empty during the Dirichlet warm start
};

ContinuousTerms continuous_objective(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                     const int32_t* y, const ObjectiveOptions& opt);

// Sums over real tokens (token_mask (B, T)); run under NoGrad.
AttentionEvalSums continuous_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                  const int32_t* y, const float* token_mask);

// The KL weight of gauss-ctx and bam-* at opt.step: att_kl (or the variant's default) × ramp, where the ramp is
// (tanh((step − m) / (m / 4.5)) + 1) / 2 with m = kl_anneal (Bahuleyan et al.: m = 4500, width 1000), or 1.
float continuous_kl_weight(AttnVariant v, const ObjectiveOptions& opt);

}  // namespace lava
