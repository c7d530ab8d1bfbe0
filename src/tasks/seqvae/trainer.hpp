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
#include "train/choice_row.hpp"
#include "train/option_row.hpp"
#include "train/train_result.hpp"

namespace lava {

struct SeqVaeTrainOptions {
  SeqVaeDataOptions data;
  VocabOptions vocab;
  SeqVaeConfig model;           // vocab size comes from the data
  int64_t kl_anneal = 0;        // linear KL weight 0 -> 1 over this many updates (0 = weight 1 throughout)
  double free_bits = 0;         // λ nats per latent dimension (0 = off)
  TrainLoopOptions loop;        // the sequence VAE's defaults are the loop's own
  SeqVaeEvalOptions eval;       // validation: batch size, samples, active-unit threshold (seed set from the loop's)
};

// The model's size options (SeqVaeConfig): `lava train --task seqvae` adds them, and they are part of a run's identity.
const OptionTable<SeqVaeConfig>& seqvae_model_options();
// Its choice options (encoder, decoder attention, score), likewise.
const ChoiceTable<SeqVaeConfig>& seqvae_choice_options();

TrainResult train_seqvae(const SeqVaeTrainOptions& opt);

// The figures of a validation line and of the done line, in their order: elbo, recon, kl (per sentence), their
// _per_token forms, ppl_bound, iw, ppl_iw, active_units, latent, sentences, tokens, samples.
Figures seqvae_line_figures(const SeqVaeEvalFigures& f);

}  // namespace lava
