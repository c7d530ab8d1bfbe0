#pragma once
// Training of the sequence VAE (lava train --task seqvae) on one side of a corpus. Adam, gradient clipping by global
// norm, the loss normalised per sentence, KL annealing (kl_weight) and free bits (KlOptions), validation at every
// epoch end and every `valid_every` updates, the learning rate multiplied by lr_decay at an epoch end from
// `start_decay_at` on whenever the validation ELBO did not improve, the best checkpoint by validation ELBO written
// atomically, one JSON line per validation. A NaN or infinite loss or gradient norm stops the run before that
// update. SIGINT/SIGTERM stop the run after the update in progress (summary.stop_signal); there is no resume state.
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/seqvae/eval.hpp"
#include "report/table.hpp"

namespace lava {

class JsonLine;

struct SeqVaeTrainOptions {
  SeqVaeDataOptions data;
  VocabOptions vocab;
  SeqVaeConfig model;           // vocab size comes from the data
  int64_t kl_anneal = 0;        // linear KL weight 0 -> 1 over this many updates (0 = weight 1 throughout)
  double free_bits = 0;         // λ nats per latent dimension (0 = off)
  int epochs = 10;
  int64_t max_steps = 0;        // stop after this many updates (0 = no limit)
  double max_minutes = 0;       // stop after this much training time (0 = no limit)
  int64_t valid_every = 0;      // also validate every this many updates (0 = at epoch ends only)
  int batch_size = 32;
  SeqVaeEvalOptions eval;       // validation: batch size, samples, active-unit threshold (seed set from `seed`)
  double lr = 1e-3, clip = 5, init = 0.1, lr_decay = 0.5;
  int start_decay_at = 2;
  int patience = 0;             // stop after this many epoch ends without improvement (0 = never)
  std::string save;             // best checkpoint path ("" = none)
  uint64_t seed = 1;
  OutputFormat format = OutputFormat::table;
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
  std::vector<SeqVaeEpochRecord> history;
};

SeqVaeTrainSummary train_seqvae(const SeqVaeTrainOptions& opt);

// The JSON object of a validation line (also used by the eval command for its row): elbo, recon, kl (per sentence),
// their _per_token forms, ppl_bound, iw, ppl_iw, active_units, latent, sentences, tokens, samples.
void add_seqvae_figures(JsonLine& j, const SeqVaeEvalFigures& f);

}  // namespace lava
