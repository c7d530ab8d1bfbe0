#pragma once
// Training of the translation model on a parallel corpus (lava train --task nmt), through the training loop of
// train/loop.hpp: loss normalised per sentence (as the authors' code), validation criterion the variant's bound per
// target token (−ELBO; −log p for soft/none; valid_criterion), one JSON line per validation, --plot pictures.
// Dropout and sampling draw update t's randomness from CounterRng(seed, "train").child(t), the batches of epoch e
// are train_batches(pairs, options, seed, e).
#include <cstdint>
#include <string>

#include "data/parallel_corpus.hpp"
#include "tasks/nmt/eval.hpp"
#include "tasks/nmt/model_file.hpp"
#include "tasks/nmt/seq2seq.hpp"
#include "train/loop_options.hpp"
#include "train/choice_row.hpp"
#include "train/option_row.hpp"
#include "train/train_result.hpp"

namespace lava {

// The corpus and its vocabularies as `lava train --task nmt` reads them (every field but dir a row of
// nmt_corpus_options); both vocabularies take min_freq and max_vocab.
struct NmtCorpusOptions {
  std::string dir;                // --data
  std::string src = "de", tgt = "en";  // the files' language suffixes
  int max_len = 50;               // train/valid pairs longer than this on either side are skipped
  int64_t min_freq = 1;           // a word needs this many occurrences in the training text
  int max_vocab = 0;              // at most this many words per side; 0 = all
  CorpusOptions reader() const;   // what the corpus reader takes
  VocabOptions vocab() const;     // what each vocabulary takes
};

struct NmtTrainOptions {
  NmtCorpusOptions corpus;
  Seq2SeqConfig model;
  ObjectiveOptions objective;
  // The loop's defaults but init 0.3: with ±0.1 the prior's scores start near 0, attention near uniform, and
  // the exact ELBO's q has nothing to pull away from (README, the question of variational attention on lava data
  // synth: ±0.3 takes it from PPL 16.0 to 1.3 in 1,875 updates; on gettext it lowers the PPL of soft attention, the
  // marginal and the exact ELBO early, and soft's converged validation PPL from 9.31 to 8.76).
  TrainLoopOptions loop = [] {
    TrainLoopOptions o;
    o.init = 0.3;
    return o;
  }();
  std::string plot_dir;      // learning curves and attention pictures after every validation (tasks/nmt/plots.hpp)
};

// The model's size options (Seq2SeqConfig): `lava train --task nmt` adds them, and they are part of a run's identity.
const OptionTable<Seq2SeqConfig>& nmt_model_options();
// Its corpus options (NmtCorpusOptions), likewise.
const OptionTable<NmtCorpusOptions>& nmt_corpus_options();
// Its choice options (the attention variant, the scorer, the encoder), likewise.
const ChoiceTable<Seq2SeqConfig>& nmt_choice_options();

TrainResult train_nmt(const NmtTrainOptions& opt);

}  // namespace lava
