#pragma once
// Exact per-token evaluation of a translation model on a split (lava eval, and validation during training).
#include <cstdint>

#include "data/parallel_corpus.hpp"
#include "tasks/nmt/seq2seq.hpp"

namespace lava {

struct NmtEvalFigures {
  double tokens = 0, nll = 0, ppl = 0, elbo = 0, kl = 0, kl_gap = 0, kl_posterior = 0, identity_error = 0;
  double entropy = 0;
  double accuracy = NAN;  // fraction of target tokens that are the argmax of the model's word distribution
  // Sampled variants (continuous latents, likelihood kind "sampled"): nll is an importance-weighted estimate,
  // kl_posterior and identity_error have no exact posterior to come from (NaN), and nll_mean_attn is −log f per token
  // at the mean attention (the deterministic predictor decoding uses); NaN for the other variants.
  double nll_mean_attn = NAN;
  double support = NAN;  // sparse variants: mean support size per target token of the sparse p or q; NaN otherwise
  double q_mass_cut = 0;  // K-max: q's mean mass per target token on the positions K-max cuts (elbo, kl, kl_gap and
                          // kl_posterior are then infinite: null in JSON lines)
};
NmtEvalFigures nmt_figures(const AttentionEvalSums& s);

// Exact evaluation of a split (K-max attention when kmax > 0); with_accuracy also scores token accuracy, which
// costs one full output layer per (token, source position) for the latent variants.
NmtEvalFigures evaluate_nmt(Seq2Seq& model, const ParallelSplit& split, int batch_size, int kmax, uint64_t seed,
                            bool with_accuracy = false);

}  // namespace lava
