#pragma once
// Reader for a tokenised parallel corpus kept the way fairseq and OpenNMT users keep one:
//   DIR/train.SRC DIR/train.TGT DIR/valid.SRC DIR/valid.TGT DIR/test.SRC DIR/test.TGT    (e.g. SRC=de, TGT=en)
// one sentence per line, line k of the SRC file translating line k of the TGT file, tokens separated by white space
// (already tokenised, possibly BPE-split with "@@ " continuation markers). `lava data gettext` writes this layout.
//
// What is read, and what is refused (each refusal is one InputError naming the file, and the line where there is one):
//   - a missing or unreadable file;
//   - SRC and TGT files with different line counts (the message names both files and both counts);
//   - a line that is not valid UTF-8;
//   - a line with more than `max_tokens_hard` tokens (a sign of a file that is not one sentence per line);
//   - a split left with no pair at all, after skipping.
// What is skipped and counted in SplitStats:
//   - pairs where either side has no tokens (in every split: an empty source gives nothing to attend to);
//   - in train and valid only, pairs with more than `max_len` tokens on either side. The test split is never
//     length-filtered, so test scores cover every test sentence (as in the paper).
// A UTF-8 byte-order mark at the start of a file is ignored, and so is a '\r' before '\n'.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.hpp"

namespace lava {

enum class CorpusSplit { train, valid, test };
const char* split_name(CorpusSplit split);  // "train", "valid", "test"
CorpusSplit corpus_split(const std::string& name);  // split_name's inverse; std::invalid_argument for another name

struct CorpusOptions {
  std::string dir;                  // folder holding {train,valid,test}.{src_lang,tgt_lang}
  std::string src_lang = "de";      // file suffix of the source side
  std::string tgt_lang = "en";      // file suffix of the target side
  int max_len = 0;                  // train/valid pairs with more tokens than this on either side are skipped; 0 = off
  int max_tokens_hard = 1000;       // a longer line is an input error, in every split
  bool keep_source_tokens = false;  // keep each pair's source token strings in ParallelSplit::src_tokens
  bool keep_target_tokens = false;  // keep each pair's target token strings in ParallelSplit::tgt_tokens (BLEU, plots)
};

// DIR/SPLIT.LANG
std::string corpus_file(const CorpusOptions& options, CorpusSplit split, std::string_view lang);

struct SentencePair {
  std::vector<int32_t> src, tgt;  // token ids, no <bos>/<eos>
  int line;                       // 1-based line number in both files
};

struct SplitStats {
  int64_t lines = 0;          // lines in each of the two files
  int64_t pairs = 0;          // pairs kept
  int64_t empty_skipped = 0;  // pairs skipped because a side had no tokens
  int64_t long_skipped = 0;   // pairs skipped by the max_len filter
  int64_t src_tokens = 0, tgt_tokens = 0;  // in the kept pairs
  int64_t src_unk = 0, tgt_unk = 0;        // of which mapped to <unk>
  int src_max_len = 0, tgt_max_len = 0;    // longest kept sentence per side
};

struct ParallelSplit {
  CorpusSplit split = CorpusSplit::train;
  std::string src_path, tgt_path;
  std::vector<SentencePair> pairs;
  // Only when asked for in CorpusOptions; element k belongs to pairs[k]. Raw strings, before <unk> mapping.
  std::vector<std::vector<std::string>> src_tokens, tgt_tokens;
  SplitStats stats;
};

// One line of report: "train: 1000 pairs of 1012 lines (2 empty, 10 over max_len 50 skipped); 7.4/7.1 tokens a
// side, <unk> 1.20%/0.80%".
std::string describe(const ParallelSplit& split, const CorpusOptions& options);

// One split, encoded with vocabularies made earlier (e.g. those stored in a model file).
ParallelSplit read_parallel_split(const CorpusOptions& options, CorpusSplit split, const Vocab& src_vocab,
                                  const Vocab& tgt_vocab);

// A split's figures as read_parallel_split counts them (lines, pairs kept, pairs skipped), without a vocabulary:
// the token and <unk> counts are left 0. What `lava sweep plan --estimate` scales an evaluation's cost by.
SplitStats count_parallel_split(const CorpusOptions& options, CorpusSplit split);

// The whole corpus: the vocabularies are built from the training split (after its filtering), then every split is
// encoded with them. The training files are read once.
struct ParallelCorpus {
  Vocab src_vocab, tgt_vocab;
  ParallelSplit train, valid, test;
};
ParallelCorpus load_parallel_corpus(const CorpusOptions& options, const VocabOptions& src_vocab_options,
                                    const VocabOptions& tgt_vocab_options);

// Undoes subword-nmt BPE: "ein Haus@@ boot@@ s ." -> "ein Hausboots ." (removes every "@@ " and a final "@@"),
// as `sed -r 's/(@@ )|(@@ ?$)//g'` does before BLEU is computed on words.
std::string join_bpe(std::string_view text);

}  // namespace lava
