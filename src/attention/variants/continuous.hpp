#pragma once
// The continuous latent attentions (a family of variants, defined in continuous.cpp with their math): a continuous
// random object per query, reparameterised, with an analytic KL to its prior, and a likelihood estimated by
// importance sampling. These entry points take one of the family's variants.
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

// The training KL weight at opt.step: att_kl (or the variant's default) × ramp, where the ramp is
// (tanh((step − m) / (m / 4.5)) + 1) / 2 with m = kl_anneal (Bahuleyan et al.: m = 4500, width 1000), or 1.
float continuous_kl_weight(AttnVariant v, const ObjectiveOptions& opt);

}  // namespace lava
