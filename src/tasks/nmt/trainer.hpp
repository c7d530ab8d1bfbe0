#pragma once
// Training and evaluation of the translation model on a parallel corpus (lava train --task nmt, lava eval).
// Adam, gradient clipping by global norm, loss normalised per sentence (as the authors' code), learning rate halved
// from epoch `start_decay_at` on whenever the validation bound (−ELBO per token; −log p for soft/none) does not
// improve on the best so far, the best checkpoint kept (written atomically), one JSON line per epoch.
//
// Stopping and resuming (tasks/nmt/train_state.hpp): with `save` = M the resume state goes to M.resume at every epoch
// end, every `checkpoint_every` updates, when max_steps or max_minutes stop the run, and on SIGINT/SIGTERM (the step
// in progress is finished first; summary.stop_signal says which). A run given that file as `resume` continues as if
// it had never stopped: same parameters, per-epoch figures and best model, bit for bit. A NaN or infinite loss or
// gradient norm stops the run before the bad update and writes no state, so the last state on disk stays good.
// A run stopped in the middle of an epoch by max_steps or max_minutes validates the model it stopped with (a
// "partial" epoch line) and keeps it as the best model if it beats every finished epoch.
#include <cstdint>
#include <string>

#include "data/parallel_corpus.hpp"
#include "tasks/nmt/eval.hpp"
#include "tasks/nmt/model_file.hpp"
#include "tasks/nmt/seq2seq.hpp"
#include "report/table.hpp"

namespace lava {

struct NmtTrainOptions {
  CorpusOptions corpus;
  VocabOptions src_vocab, tgt_vocab;
  Seq2SeqConfig model;
  ObjectiveOptions objective;
  int epochs = 10;
  int64_t max_steps = 0;     // stop after this many updates (0 = no limit)
  double max_minutes = 0;    // stop after this much training time (0 = no limit)
  int batch_size = 32;
  double lr = 1e-3, clip = 5, init = 0.1, lr_decay = 0.5;
  int start_decay_at = 2;
  int patience = 0;          // stop after this many epochs without improvement (0 = never)
  std::string save;          // best checkpoint path ("" = none); the resume state goes to save + ".resume"
  std::string resume;        // continue the run whose resume state is in this file ("" = start afresh)
  int64_t checkpoint_every = 0;  // also write the resume state every this many updates (0 = not between epochs)
  std::string plot_dir;      // learning curves and attention pictures after every epoch (tasks/nmt/plots.hpp)
  uint64_t seed = 1;
  OutputFormat format = OutputFormat::table;
};

struct NmtTrainSummary {
  int64_t steps = 0;
  int epochs = 0;
  double seconds = 0, tokens_per_second = 0;
  NmtEvalFigures best_valid;
  bool stopped_on_nan = false;
  int stop_signal = 0;           // SIGINT or SIGTERM if a signal stopped the run
  int stop_epoch = 0;            // where the run stopped: the epoch in progress
  int64_t stop_batch = 0, stop_batches = 0;  // batches of it done, of this many
  std::string resume_state;      // the resume state last written ("" = none)
};

NmtTrainSummary train_nmt(const NmtTrainOptions& opt);

}  // namespace lava
