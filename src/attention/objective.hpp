#pragma once
// Training objectives and evaluation figures of every attention variant (attention/variant.hpp), over a batch of
// B·T queries with S candidate positions each. The model supplies the prior log p(z | x, x̃), optionally the
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
  Var<float> q_scores;   // (B, T, S) q's scores before the softmax (var-dirichlet), padding at kMaskedLogit
  VariantVars extra;     // the variant's own parameters (attention/variant_params.hpp)
  bool has_q() const { return log_q.tape != nullptr; }
};

struct ObjectiveOptions {
  int samples = 5;            // var-rws
  float temperature = 1.0f;   // var-gumbel
  int64_t step = 0;           // the update being computed (the trainer sets it): the schedules below read it
  int64_t warm_start = 0;     // var-*: updates before the inference network takes over (variant.hpp)
  float att_kl = -1.0f;       // gauss-ctx, bam-*: weight of the KL term in training (< 0: the variant's default)
  int64_t kl_anneal = 0;      // gauss-ctx, bam-*: midpoint of the tanh KL-weight ramp (0: no ramp)
  float crf_l2 = 0.005f;      // structured: L2 penalty on the CRF's pairwise scores
  // If set, receives the step's noise for an independent re-computation (lava crosscheck-dump): the drawn indices
  // z (hard-sample, var-sample: one per query; var-rws: K per query, sample k of query n at n·K + k) or the Gumbel
  // draws g (var-gumbel: one per query and position).
  std::vector<float>* noise_out = nullptr;
};

struct ObjectiveTerms {
  Var<float> objective;  // scalar: Σ over real tokens of the per-token training objective (maximise)
  double value_sum = 0;  // Σ of the objective's value without REINFORCE surrogate terms (log-lik or ELBO estimate)
  double kl_sum = 0;     // Σ KL(q ‖ p) over real tokens (0 without q)
  double q_entropy_sum = 0, prior_entropy_sum = 0;  // Σ H(q), Σ H(p) over real tokens (0 without q): collapse_monitor
};

// y: (B, T) labels; token_mask: (B, T), 1 for real tokens and 0 for padding.
ObjectiveTerms attention_objective(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                   const int32_t* y, const float* token_mask, const ObjectiveOptions& opt);

// Evaluation sums over real tokens (all in nats, double precision).
struct AttentionEvalSums {
  double tokens = 0;
  double log_lik = 0;       // exact log p(y|x): the enumerated marginal for latent variants, log f(E_p z) otherwise
  double elbo = 0;          // Σ_i q_i log f_i − KL(q‖p), with q = p when the variant has no q (the Jensen bound)
  double kl = 0;            // KL(q ‖ p)
  double kl_posterior = 0;  // KL(q ‖ p(z | x, y)) computed directly from the exact posterior
  double entropy = 0;       // H(p), the prior's entropy
  double q_entropy = 0;     // H(q), with q = p when the variant has no q (latent, non-sampled variants only)
  double max_identity_error = 0;  // max over tokens of |(log p − ELBO) − KL(q ‖ posterior)|
  bool sampled = false;           // log_lik is an importance-weighted estimate; no exact posterior (kl_posterior)
  double mean_attn_log_lik = 0;   // sampled variants: log f(x, Σ_i w_i e_i) at attention_weights() (the
                                  // deterministic predictor that decoding and accuracy use)
  void add(const AttentionEvalSums& o);
};

// Per-token figures from the enumerated log f (B, T, S) (soft_log_lik (B, T) for the non-latent variants) plus the
// prior and q values; `kmax` > 0 renormalises the prior over its top-K positions first (K-max test-time attention).
AttentionEvalSums attention_eval(AttnVariant v, const float* log_prior, const float* log_q, const float* log_f,
                                 const float* soft_log_lik, const float* token_mask, int64_t N, int64_t S, int kmax);

// The evaluation sums of one batch from the model's distributions and head (no gradient; run under NoGrad):
// enumerated for the latent variants, the direct log f at attention_weights() for the deterministic ones, and the
// importance-weighted estimate of attention/continuous.hpp for the sampled ones. y: (B, T); token_mask: (B, T).
AttentionEvalSums attention_eval_batch(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                       const int32_t* y, const float* token_mask, int kmax);

// Draw one index per row from a categorical given by log-probabilities (B·T rows of S): inverse CDF on
// rng.uniform(row · stride + offset).
void sample_categorical(const float* log_probs, int64_t N, int64_t S, const CounterRng& rng, uint64_t stride,
                        uint64_t offset, int32_t* out);

}  // namespace lava
