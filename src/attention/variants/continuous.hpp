#pragma once
// The continuous latent attentions (src/method.md §2.3): a continuous random object per query, reparameterised, with an
// analytic KL to its prior, and a likelihood estimated by importance sampling. Each member is its own file under
// attention/variants/ (the Dirichlet, the Gaussian context, and the Bayesian attention modules' Weibull and
// log-normal weights, which share bam.hpp); this is what they share, in continuous.cpp:
//   training    log f(x, z) − w·KL(q ‖ p) with one reparameterised draw z ~ q; every reported value uses w = 1, so
//               it is a true lower bound (the ELBO estimate)
//   evaluation  K = eval_samples draws z_k ~ q per query, and per token
//                 log p̂(y|x) = log (1/K) Σ_k f(x, z_k)_y p(z_k) / q(z_k)   (importance-weighted, E log p̂ ≤ log p)
//                 ELBO ≈ (1/K) Σ_k log f(x, z_k)_y − KL(q ‖ p)               (analytic KL)
//               so kl_gap = log p̂ − ELBO estimates KL(q ‖ p(z|x,y)); no exact posterior exists to check it against.
#include <cstdint>
#include <functional>
#include <vector>

#include "attention/attention_variant.hpp"

namespace lava {

struct ContinuousTerms {
  Var<float> per_token;  // (B, T) the training objective (KL weighted)
  Var<float> value;      // (B, T) its value with KL weight 1 (the ELBO estimate; the Jensen bound in warm start)
  Var<float> kl;         // (B, T) KL(q ‖ p); empty during the Dirichlet warm start
};

// The real (non-padding) positions of a batch's (B, T, S) distributions, read from the scores' padding.
struct RealPositions {
  Shape shape;                   // (B, T, S)
  std::vector<uint8_t> pad;      // (B, T, S) 1 = padding
  std::vector<float> real_host;  // (B, T, S) 1 at real positions
  std::vector<int32_t> len;      // (B·T) real positions per query
  Var<float> real;               // real_host on the tape (an input)
};
RealPositions real_positions(Ctx& c, const AttentionDists& d);

// per_token = log f − w·KL and value = log f − KL, per query (B, T).
ContinuousTerms kl_weighted_terms(Var<float> log_f, Var<float> kl, float w);

// The weights of one query from log S (S positions, −∞ at padding) with max m: w_s = S_s / Σ S, written to w (S)
// as float; log_s is overwritten by log w_s = log S_s − m − log Σ_j e^{log S_j − m}.
void normalise_log_weights(std::vector<double>& log_s, double m, float* w);

class ContinuousLatent : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  // One batch's training terms, drawing from c.next_rng().
  virtual ContinuousTerms terms(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                                const ObjectiveOptions& opt) const = 0;

  // The training KL weight at opt.step: att_kl (or default_kl_weight) × ramp, where the ramp is
  // (tanh((step − m) / (m / 4.5)) + 1) / 2 with m = kl_anneal (Bahuleyan et al.: m = 4500, width 1000), or 1.
  virtual float kl_weight(const ObjectiveOptions& opt) const;

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions& opt) const override;

  // Writes eval_samples; a member adds its own keys.
  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override;

 protected:
  virtual float default_kl_weight() const { return 1.f; }

  // One importance draw: fills ratio (B·T, zeroed) with log p(z_k) − log q(z_k) per query and returns
  // log f(x, z_k)_y (B, T).
  using ImportanceDraw = std::function<Var<float>(const CounterRng& rng, std::vector<double>& ratio)>;
  // The evaluation sums above from K = eval_samples draws (c.next_rng() once per draw), the analytic kl (B, T),
  // and the mean-attention figure at weights(d).
  AttentionEvalSums importance_eval(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                                    const float* token_mask, Var<float> kl, const ImportanceDraw& draw) const;
};

// A continuous latent's training terms and the KL weight it trains with (the tests read them).
ContinuousTerms continuous_objective(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                     const int32_t* y, const ObjectiveOptions& opt);
float continuous_kl_weight(AttnVariant v, const ObjectiveOptions& opt);
// Sums over real tokens (token_mask (B, T)); run under NoGrad.
AttentionEvalSums continuous_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                  const int32_t* y, const float* token_mask);

}  // namespace lava
