#pragma once
// Training objectives and evaluation figures of the attention variants (attention/attention_variant.hpp), over a
// batch of B·T queries with S candidate positions each. The model supplies the prior log p(z | x, x̃), optionally the
// inference network's log q(z | x, y), and the output head f; padded positions carry kMaskedLogit in the scores, so
// their probability is exactly 0 in float and 0 · log 0 never appears.
#include <cstdint>
#include <vector>

#include "attention/output_head.hpp"
#include "attention/variant.hpp"
#include "attention/variant_params.hpp"
#include "nn/masked_logit.hpp"

namespace lava {

struct AttentionDists {
  Var<float> log_prior;  // (B, T, S)
  Var<float> log_q;      // (B, T, S); tape == nullptr when the variant has no inference network
  Var<float> scores;     // (B, T, S) the prior's scores before the softmax, padding at kMaskedLogit
  Var<float> q_scores;   // (B, T, S) q's scores before the softmax (for q's that are not categorical), padding at
                         // kMaskedLogit
  VariantVars extra;     // the variant's own parameters (attention/variant_params.hpp)
  bool has_q() const { return log_q.tape != nullptr; }
};

// Show, Attend and Tell's estimator for hard attention in captioning: its weights and moving baseline.
struct SatHardOptions {
  float reinforce = 1.0f;    // λ_r, the weight of the score-function term (--sat-reinforce)
  float entropy = 0.0f;      // λ_e, the entropy bonus (--sat-entropy)
  float p_expected = 0.5f;   // probability per sentence of the expected (soft) context (--sat-expected)
  float baseline_decay = 0.9f;  // of the moving-average baseline (--sat-baseline-decay; 0 = the last batch's mean)
};

// Each field is read by the variants whose estimator it configures; the others ignore it.
struct ObjectiveOptions {
  int samples = 5;            // importance-weighted (wake-sleep) training: samples from q
  float temperature = 1.0f;   // relaxed (Gumbel-softmax) samples: the temperature τ
  int64_t step = 0;           // the update being computed (the trainer sets it): the schedules below read it
  int64_t warm_start = 0;     // variants with q: updates before the inference network takes over
  float att_kl = -1.0f;       // continuous latents: weight of the KL term in training (< 0: the variant's default)
  int64_t kl_anneal = 0;      // continuous latents: midpoint of the tanh KL-weight ramp (0: no ramp)
  float crf_l2 = 0.005f;      // the linear-chain CRF: L2 penalty on its pairwise scores
  SatHardOptions sat;         // the moving-baseline estimator
  float baseline = 0;         // its moving-average baseline b before this batch (the model keeps it)
  // If set, receives the step's noise for an independent re-computation (lava crosscheck-dump), in the layout the
  // variant documents (drawn indices, K per query at n·K + k, or Gumbel draws per query and position).
  std::vector<float>* noise_out = nullptr;
};

struct ObjectiveTerms {
  Var<float> objective;  // scalar: Σ over real tokens of the per-token training objective (maximise)
  double value_sum = 0;  // Σ of the objective's value without REINFORCE surrogate terms (log-lik or ELBO estimate)
  double kl_sum = 0;     // Σ KL(q ‖ p) over real tokens (0 without q)
  double q_entropy_sum = 0, prior_entropy_sum = 0;  // Σ H(q), Σ H(p) over real tokens (0 without q): collapse_monitor
  double sampled_words = 0, sampled_log_lik = 0;  // the moving-baseline estimator: sampled words, Σ log f over them
  double support_sum = 0;  // sparse variants: Σ over real tokens of the support size of the trained distribution
};

// A batch's targets as every objective reads them.
struct ObjectiveTargets {
  const int32_t* y;          // (B, T) labels
  const float* token_mask;   // (B, T) 1 for real tokens, 0 for padding
  Var<float> mask;           // the same on the tape (a constant)
};

// y: (B, T) labels; token_mask: (B, T), 1 for real tokens and 0 for padding. The variant's objective, after the
// marginal warm start where the variant takes it (AttnVariantInfo::marginal_warm_start), plus the entropy sums of q.
ObjectiveTerms attention_objective(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                   const int32_t* y, const float* token_mask, const ObjectiveOptions& opt);

// A moving-average reward baseline's next value, b ← decay · b + (1 − decay) · (mean log f of the sampled words),
// unchanged when no word was sampled (AttnVariantInfo::moving_baseline).
float moving_baseline_update(float baseline, const ObjectiveTerms& t, float decay);

// Evaluation sums over real tokens (all in nats, double precision).
struct AttentionEvalSums {
  double tokens = 0;
  double log_lik = 0;       // exact log p(y|x): the enumerated marginal for latent variants, log f(E_p z) otherwise
  double elbo = 0;          // Σ_i q_i log f_i − KL(q‖p), with q = p when the variant has no q (the Jensen bound)
  double kl = 0;            // KL(q ‖ p)
  double kl_posterior = 0;  // KL(q ‖ p(z | x, y)) computed directly from the exact posterior
  double entropy = 0;       // H(p), the prior's entropy
  double q_entropy = 0;     // H(q), with q = p when the variant has no q (latent, non-sampled variants only)
  double max_identity_error = 0;  // max over tokens with a finite ELBO of |(log p − ELBO) − KL(q ‖ posterior)|
  bool sampled = false;           // log_lik is an importance-weighted estimate; no exact posterior (kl_posterior)
  double mean_attn_log_lik = 0;   // sampled variants: log f(x, Σ_i w_i e_i) at attention_weights() (the
                                  // deterministic predictor that decoding and accuracy use)
  double support = 0;  // sparse variants (AttnVariantInfo::sparse): Σ over real tokens of |supp q|, q = p without q
  double q_mass_cut = 0;  // K-max: Σ over real tokens of q's mass on the positions K-max cuts from the prior; where
                          // it is > 0, elbo, kl and kl_posterior are infinite (log p_K = −∞ where q > 0)
  double infinite_elbo_tokens = 0;  // K-max: the real tokens whose ELBO is −∞ (max_identity_error skips them)
  void add(const AttentionEvalSums& o);
  // The figure to report: max_identity_error, or NaN where there is nothing to measure it on (a sampled estimate
  // has no exact posterior; under K-max every token may have an ELBO of −∞, and a maximum over no token is not 0).
  double identity_error() const;
};

// Per-token figures from the enumerated log f (B, T, S) (soft_log_lik (B, T) when v is not latent) plus the
// prior and q values; `kmax` > 0 renormalises the prior over its top-K positions first (K-max test-time attention).
AttentionEvalSums attention_eval(AttnVariant v, const float* log_prior, const float* log_q, const float* log_f,
                                 const float* soft_log_lik, const float* token_mask, int64_t N, int64_t S, int kmax);

// The evaluation sums of one batch from the model's distributions and head (no gradient; run under NoGrad): the
// variant's (AttentionVariant::evaluate). y: (B, T); token_mask: (B, T).
AttentionEvalSums attention_eval_batch(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                       const int32_t* y, const float* token_mask, int kmax);

// Draw one index per row from a categorical given by log-probabilities (B·T rows of S): inverse CDF on
// rng.uniform(row · stride + offset).
void sample_categorical(const float* log_probs, int64_t N, int64_t S, const CounterRng& rng, uint64_t stride,
                        uint64_t offset, int32_t* out);

}  // namespace lava
