#pragma once
// What the Bayesian attention modules (Fan et al. 2020; src/method.md §2.3) share, their Weibull and their
// log-normal weights: unnormalised weights S_i > 0 per position with E S_i ∝ p_i (p = the prior's softmax), attention
// w = S / Σ S, so a draw is w = softmax(log p + noise) with the member's noise on log S. Their prior on S reads π,
// either a contextual softmax π_i = softmax_i g(U_i), g(u) = w2ᵀ relu(W1 u + b1) + b2 over the head's memory U
// (VariantConfig::bam_prior "contextual", parameters attn/prior/...), or a fixed one ("fixed"). Both train
// log f − w·KL with w = --att-kl (default 1) × ramp, and evaluate by importance sampling (continuous.hpp) with the
// padding's S = 0.
#include <cstdint>

#include "attention/variants/continuous.hpp"

namespace lava {

struct BamPosterior {
  RealPositions pos;
  Var<float> phi;     // (B, T, S) log p with padding at 0
  Var<float> log_pi;  // (B, T, S) contextual: log π gathered per query, padding at 0; empty for the fixed prior
};

class BamLatent : public ContinuousLatent {
 public:
  using ContinuousLatent::ContinuousLatent;

  ContinuousTerms terms(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                        const ObjectiveOptions& opt) const override;
  AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                             const float* token_mask, int kmax) const override;
  void declare_params(ParamStore<float>& ps, const VariantConfig& cfg, int Hd, VariantParamIds& ids) const override;
  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override;

 protected:
  // Training's reparameterised noise on log S at element i of (B, T, S).
  virtual float log_s_noise(const VariantConfig& cfg, const CounterRng& rng, int64_t i) const = 0;
  // KL(q(S_i) ‖ prior(S_i)) per element (B, T, S); the padding's terms are masked out by the caller.
  virtual Var<float> position_kl(Ctx& c, const VariantConfig& cfg, const BamPosterior& P) const = 0;
  // One evaluation draw of log S at the real element i; adds log prior(S_i) − log q(S_i) to ratio.
  virtual double draw_log_s(const VariantConfig& cfg, const BamPosterior& P, const CounterRng& rng, int64_t i,
                            double& ratio) const = 0;

 private:
  static BamPosterior build(Ctx& c, const OutputHead& head, const AttentionDists& d);
  Var<float> analytic_kl(Ctx& c, const VariantConfig& cfg, const BamPosterior& P) const;  // (B, T)
};

}  // namespace lava
