#pragma once
// Training objectives and evaluation figures of every attention variant (attention/variant.hpp), over a batch of
// B·T queries with S candidate positions each. The model supplies the prior log p(z | x, x̃), optionally the
// inference network's log q(z | x, y), and the output head f; padded positions carry kMaskedLogit in the scores, so
// their probability is exactly 0 in float and 0 · log 0 never appears.
#include <cstdint>
#include <vector>

#include "attention/output_head.hpp"
#include "attention/variant.hpp"

namespace lava {

constexpr float kMaskedLogit = -1e9f;

struct AttentionDists {
  Var<float> log_prior;  // (B, T, S)
  Var<float> log_q;      // (B, T, S); tape == nullptr when the variant has no inference network
  bool has_q() const { return log_q.tape != nullptr; }
};

struct ObjectiveOptions {
  int samples = 5;           // var-rws
  float temperature = 1.0f;  // var-gumbel
};

struct ObjectiveTerms {
  Var<float> objective;  // scalar: Σ over real tokens of the per-token training objective (maximise)
  double value_sum = 0;  // Σ of the objective's value without REINFORCE surrogate terms (log-lik or ELBO estimate)
  double kl_sum = 0;     // Σ KL(q ‖ p) over real tokens (0 without q)
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
  double max_identity_error = 0;  // max over tokens of |(log p − ELBO) − KL(q ‖ posterior)|
  void add(const AttentionEvalSums& o);
};

// Per-token figures from the enumerated log f (B, T, S) (soft_log_lik (B, T) for the non-latent variants) plus the
// prior and q values; `kmax` > 0 renormalises the prior over its top-K positions first (K-max test-time attention).
AttentionEvalSums attention_eval(AttnVariant v, const float* log_prior, const float* log_q, const float* log_f,
                                 const float* soft_log_lik, const float* token_mask, int64_t N, int64_t S, int kmax);

// Draw one index per row from a categorical given by log-probabilities (B·T rows of S): inverse CDF on
// rng.uniform(row · stride + offset).
void sample_categorical(const float* log_probs, int64_t N, int64_t S, const CounterRng& rng, uint64_t stride,
                        uint64_t offset, int32_t* out);

}  // namespace lava
