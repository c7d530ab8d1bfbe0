#pragma once
// Data, evaluation and model file of the sequence VAE (tasks/seqvae/model.hpp).
//
// Data: one side of a corpus directory, DIR/{train,valid,test}.LANG (one tokenised sentence per line), read by the
// parallel-corpus reader with both sides set to LANG, so every check and message of data/parallel_corpus.hpp holds
// (missing file, empty split, bad UTF-8, each one InputError naming the file). The vocabulary comes from train.
//
// Evaluation of a split, all sums in double in a fixed order (the same bits with any thread count):
//   recon   Σ_t log p(x_t | x_<t, z, X), z ~ q(z|X) (the mean over K samples)
//   kl      KL(q(z|X) ‖ N(0, I)), closed form
//   elbo    recon − kl
// reported per sentence (averages over sentences) and per token (sums over all predicted tokens: words + <eos>);
// ppl_bound = exp(−Σ ELBO / tokens) ≥ the model's perplexity. With K samples also the importance-weighted bound
// (Burda et al. 2016) iw = log (1/K) Σ_k p(X|z_k) p(z_k) / q(z_k|X), per sentence, and ppl_iw = exp(−Σ iw / tokens);
// iw ≥ elbo in expectation, and both are ≤ log p(X). Active units: count_active_units over the split's μ.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/parallel_corpus.hpp"
#include "tasks/seqvae/model.hpp"

namespace lava {

struct SeqVaeDataOptions {
  std::string dir;
  std::string lang = "en";
  int max_len = 50;  // train/valid sentences longer than this are skipped (test never); 0 = no limit
};
// The reader's options for DIR/SPLIT.LANG as both sides.
CorpusOptions seqvae_corpus_options(const SeqVaeDataOptions& d);

struct SeqVaeEvalFigures {
  int64_t sentences = 0, tokens = 0;
  int samples = 1;
  double elbo = 0, recon = 0, kl = 0;                             // per sentence
  double elbo_per_token = 0, recon_per_token = 0, kl_per_token = 0;
  double ppl_bound = 0;                                           // exp(−Σ ELBO / tokens)
  double iw = 0, ppl_iw = 0;                                      // importance-weighted bound, per sentence
  int active_units = 0, latent = 0;
  std::vector<double> kl_per_dim;   // (Z) mean over sentences of KL_d
  std::vector<double> mu_variance;  // (Z) Var_X μ_d(X)
};

struct SeqVaeEvalOptions {
  int batch_size = 64;
  int samples = 1;               // K samples of z per sentence
  double au_threshold = 0.01;    // active-unit threshold on Var_X μ_d
  int64_t limit = 0;             // only the first `limit` sentences of the split (0 = all)
  uint64_t seed = 1;             // the noise: stream "seqvae/eval", child = batch · K + k
};

SeqVaeEvalFigures evaluate_seqvae(SeqVae& model, const ParallelSplit& split, const SeqVaeEvalOptions& opt);

}  // namespace lava
