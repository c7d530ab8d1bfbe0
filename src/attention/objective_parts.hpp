#pragma once
// The pieces the variants' objectives and evaluations share (attention/variants/*.cpp): masked sums over real
// tokens, one-hot and categorical KL terms, K-max prior, and the two standard evaluations.
#include <cstdint>

#include "attention/objective.hpp"

namespace lava {

// A constant (no-gradient) copy of values on the tape.
inline Var<float> constant(Tape<float>& tape, const Shape& s, const float* v) { return tape.input(s, v, false); }

// w[n, s] = 1[s = z_n]: (B, T, S)
Var<float> one_hot(Tape<float>& tape, const Shape& s, const int32_t* z);

// KL(q‖p) per query: Σ_s q_s (log q_s − log p_s)   -> (B, T)
Var<float> kl_categorical(Var<float> log_q, Var<float> log_p);

double masked_sum(const float* per_token, const float* mask, int64_t n_tokens);
double masked_sum(Var<float> per_token, const float* mask);

// The terms of a per-query objective: Σ over real tokens of per_token (surrogates included), of value (without
// them) and of kl (when set).
ObjectiveTerms masked_terms(Var<float> per_token, Var<float> value, Var<float> kl, const ObjectiveTargets& t);

// The objective of a deterministic attention: log f(x, Σ_i w_i U_i)_y per query at `weights`, its own value.
ObjectiveTerms direct_objective(Ctx& c, const OutputHead& head, Var<float> weights, const ObjectiveTargets& t);

// K-max soft attention (`lava eval --kmax`): the prior kept at its kmax largest real positions (ties: the lower
// position) and renormalised, p_K,i = p_i 1[i ∈ top K] / Σ_{j ∈ top K} p_j, as decoding weighs the context: (B, T, S).
Var<float> top_k_prior(Tape<float>& tape, Var<float> log_prior, int kmax);

// The evaluation of a latent variant: log f enumerated over every position, then attention_eval.
AttentionEvalSums enumerated_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                  const int32_t* y, const float* token_mask, int kmax);
// The evaluation of a deterministic attention: the direct log f at `weights`, then attention_eval.
AttentionEvalSums direct_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                              Var<float> weights, const int32_t* y, const float* token_mask, int kmax);

}  // namespace lava
