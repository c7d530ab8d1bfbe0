#pragma once
// A corpus directory in subword units: `lava data bpe` learns joint BPE on both sides of IN's training split (one
// model for source and target, as the paper's 14k joint types) and writes every split of IN, each word cut into
// pieces with "@@ " markers, to OUT, beside OUT/subword.model (the learned model; a translation model trained on OUT
// carries a copy of it). Lines are kept one for one, so line k of OUT still translates line k.
#include <cstdint>
#include <string>

namespace lava {

struct SubwordCorpusOptions {
  std::string in_dir, out_dir;
  std::string src_lang = "de", tgt_lang = "en";
  int types = 14000;   // subword types of the joint model
  bool quiet = false;  // no progress notes on stderr
};

struct SubwordCorpusSummary {
  int types = 0;                               // the model's piece table, which a small corpus may leave smaller
  int64_t train_words = 0, train_pieces = 0;   // both sides of the training split, before and after splitting
};

// The name of the model file inside a subword corpus directory.
constexpr const char* kSubwordModelFile = "subword.model";

SubwordCorpusSummary build_subword_corpus(const SubwordCorpusOptions& options);

}  // namespace lava
