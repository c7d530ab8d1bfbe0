#pragma once
// Training of the sequence VAE (lava train --task seqvae) on one side of a corpus, through the training loop of
// train/loop.hpp (Adam, clipping, validation at epoch ends and every valid_every updates, decay, patience,
// checkpoints, signals, resume): the loss normalised per sentence, KL annealing (kl_weight) and free bits
// (KlOptions), the best model by validation ELBO, one JSON line per validation. Update t draws dropout from
// CounterRng(seed, "seqvae/train").child(t) and the posterior sample from CounterRng(seed, "seqvae/z").child(t).
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/seqvae/eval.hpp"
#include "train/loop_options.hpp"

namespace lava {

class JsonLine;

struct SeqVaeTrainOptions {
  SeqVaeDataOptions data;
  VocabOptions vocab;
  SeqVaeConfig model;           // vocab size comes from the data
  int64_t kl_anneal = 0;        // linear KL weight 0 -> 1 over this many updates (0 = weight 1 throughout)
  double free_bits = 0;         // λ nats per latent dimension (0 = off)
  TrainLoopOptions loop;        // the sequence VAE's defaults are the loop's own
  SeqVaeEvalOptions eval;       // validation: batch size, samples, active-unit threshold (seed set from the loop's)
};

// One validation: where the run stood, its training averages since the previous validation, and the figures.
struct SeqVaeEpochRecord {
  double epoch = 0;  // (e − 1) + batches done / batches in epoch e
  int64_t steps = 0;
  double seconds = 0, lr = 0, kl_weight = 0;
  double train_loss = 0, train_recon = 0, train_kl = 0;  // per sentence
  SeqVaeEvalFigures valid;
  bool best = false, partial = false;
};

struct SeqVaeTrainSummary {
  int64_t steps = 0;
  int epochs = 0;
  double best_epoch = 0;
  double seconds = 0, tokens_per_second = 0;
  SeqVaeEvalFigures best_valid;
  bool stopped_on_nan = false;
  int stop_signal = 0;
  int stop_epoch = 0;            // where the run stopped: the epoch in progress
  int64_t stop_batch = 0, stop_batches = 0;  // batches of it done, of this many
  std::string resume_state;     // the resume state last written ("" = none)
  std::string stop_reason;       // "patience", "epochs", "max-steps", "max-minutes", "signal" or "nan"
  std::vector<SeqVaeEpochRecord> history;
};

SeqVaeTrainSummary train_seqvae(const SeqVaeTrainOptions& opt);

// The JSON object of a validation line (also used by the eval command for its row): elbo, recon, kl (per sentence),
// their _per_token forms, ppl_bound, iw, ppl_iw, active_units, latent, sentences, tokens, samples.
void add_seqvae_figures(JsonLine& j, const SeqVaeEvalFigures& f);

}  // namespace lava
