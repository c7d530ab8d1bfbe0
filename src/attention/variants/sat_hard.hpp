#pragma once
// Show, Attend and Tell's stochastic hard attention (Xu et al. 2015 §4.1), `--attn sat-hard`, captioning only:
// the Jensen bound L_s = Σ_t Σ_i α_ti log f(y_t | i) trained by Monte Carlo with s_t ~ α_t:
//   ∇L_s ≈ ∇ log f(y_t | s_t) + λ_r (log f(y_t | s_t) − b) ∇ log α_{t,s_t} + λ_e ∇H[α_t]
// and, with probability p_expected per sentence, the expected context instead: the soft term ∇ log f(y_t | E α_t)
// alone (the paper's "like dropout").
// b is a moving average of the per-word log-likelihood of the sampled words: after each batch,
//   b ← decay · b + (1 − decay) · mean over the batch's sampled words of log f(y_t | s_t).
// The reward of s_t is word t's own log-likelihood: the models that use this (tasks/caption) feed the soft context
// forward, so s_t reaches word t only, and the other words' terms of the sentence's log-likelihood are independent
// of s_t (zero mean in the score-function term, variance only). With λ_r = 1, λ_e = 0, p_expected = 0 the estimator is
// unbiased for ∇L_s whatever b is (tests/attention/test_caption_sat.cpp checks it against enumeration).
// As a variant it is hard-sample's model (its exact likelihood and Jensen bound in evaluation) with this estimator;
// model files store it as hard-sample with the flag "sat_hard" = 1.
#include <cstdint>

#include "attention/objective.hpp"

namespace lava {

// log_prior: (B, T, S) log α; y, token_mask: (B, T). baseline: b before this batch. Draws from c.next_rng() twice
// (the sentences' coins, then the positions).
// The terms carry the objective (surrogate included), value_sum = Σ log f of the words as trained, and the sampled
// words' count and Σ log f (the baseline's update reads their mean).
ObjectiveTerms sat_hard_objective(Ctx& c, const OutputHead& head, Var<float> log_prior, const int32_t* y,
                                  const float* token_mask, float baseline, const SatHardOptions& opt);

}  // namespace lava
