#pragma once
// Training and evaluation of the translation model on a parallel corpus (lava train --task nmt, lava eval).
// Adam, gradient clipping by global norm, loss normalised per sentence (as the authors' code), learning rate halved
// from epoch `start_decay_at` on whenever the validation bound (−ELBO per token; −log p for soft/none) does not
// improve on the best so far, the best checkpoint kept (written atomically), one JSON line per epoch.
#include <cstdint>
#include <string>

#include "data/parallel_corpus.hpp"
#include "models/nmt_eval.hpp"
#include "models/nmt_model_file.hpp"
#include "models/seq2seq.hpp"
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
  std::string save;          // best checkpoint path ("" = none)
  uint64_t seed = 1;
  OutputFormat format = OutputFormat::table;
};

struct NmtTrainSummary {
  int64_t steps = 0;
  int epochs = 0;
  double seconds = 0, tokens_per_second = 0;
  NmtEvalFigures best_valid;
  bool stopped_on_nan = false;
};

NmtTrainSummary train_nmt(const NmtTrainOptions& opt);

}  // namespace lava
