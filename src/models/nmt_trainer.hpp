#pragma once
// Training and evaluation of the translation model on a parallel corpus (lava train --task nmt, lava eval).
// Adam, gradient clipping by global norm, loss normalised per sentence (as the authors' code), learning rate halved
// from epoch `start_decay_at` on whenever the validation bound (−ELBO per token; −log p for soft/none) does not
// improve on the best so far, the best checkpoint kept (written atomically), one JSON line per epoch.
#include <cstdint>
#include <memory>
#include <string>

#include "data/parallel_corpus.hpp"
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

struct NmtEvalFigures {
  double tokens = 0, nll = 0, ppl = 0, elbo = 0, kl = 0, kl_gap = 0, kl_posterior = 0, identity_error = 0;
  double entropy = 0;
};
NmtEvalFigures nmt_figures(const AttentionEvalSums& s);

struct NmtTrainSummary {
  int64_t steps = 0;
  int epochs = 0;
  double seconds = 0, tokens_per_second = 0;
  NmtEvalFigures best_valid;
  bool stopped_on_nan = false;
};

NmtTrainSummary train_nmt(const NmtTrainOptions& opt);

// A trained model with its vocabularies, from a checkpoint.
struct LoadedNmt {
  std::unique_ptr<Seq2Seq> model;
  Vocab src_vocab, tgt_vocab;
  std::map<std::string, std::string> metadata;
};
LoadedNmt load_nmt(const std::string& path);
void save_nmt(const std::string& path, const Seq2Seq& model, const Vocab& src, const Vocab& tgt,
              std::map<std::string, std::string> extra);

// Exact evaluation of a split (K-max attention when kmax > 0).
NmtEvalFigures evaluate_nmt(Seq2Seq& model, const ParallelSplit& split, int batch_size, int kmax, uint64_t seed);

}  // namespace lava
