#pragma once
// Word alignments read off a trained translation model (lava align, lava eval --gold-align).
//
// For target word j of a sentence (0-based, y_{j+1} in the decoder's numbering; the </s> step is not a word and is
// never aligned) the alignment link is (argmax_i d_j(i), j), i over the real source words 0..src_len−1 (the source
// side carries no <bos>/<eos>, so position i is source token i), ties to the lowest i, where d_j is one of
//   prior      p(z_j = i | x, y_<j)                       the attention the decoder reads before seeing y_j
//   posterior  p(z_j = i | x, y) ∝ p(z_j = i) f(x, e_i)_{y_j}   the exact posterior (seq2seq.hpp attention_maps)
//   q          q(z_j = i | x, y)                          the inference network (variants with q only)
// So every target word gets exactly one link, which is what the synthetic gold (lava data synth) mostly holds:
// each target word aligned to the source word it came from, </s> and dropped source words unaligned.
//
// Line k of a corpus file is sentence pair k. The reader skips pairs with an empty side (SplitStats::empty_skipped);
// alignments_by_line puts an empty alignment on those lines so that output and gold files pair up line by line.
#include <optional>
#include <string>
#include <vector>

#include "data/alignment.hpp"
#include "data/parallel_corpus.hpp"
#include "tasks/nmt/seq2seq.hpp"

namespace lava {

enum class AlignWhich { prior, posterior, q };
const char* align_which_name(AlignWhich which);  // "prior", "posterior", "q"
AlignWhich parse_align_which(const std::string& name);  // UsageError naming --which for anything else

// One alignment per pair of split.pairs, in that (corpus) order, from `which`. UsageError when which == q and the
// model has no inference network.
std::vector<SentenceAlignment> predict_alignments(Seq2Seq& model, const ParallelSplit& split, AlignWhich which,
                                                  int batch_size);

// One alignment per line of the split's files (split.stats.lines): per_pair[k] at line split.pairs[k].line and an
// empty alignment on every line the reader skipped.
std::vector<SentenceAlignment> alignments_by_line(const ParallelSplit& split,
                                                  const std::vector<SentenceAlignment>& per_pair);

// The gold alignments of a split from a Pharaoh file with one line per line of the split's files, every link
// checked against its pair's lengths (a skipped pair has no tokens, so its line must be empty): one InputError
// naming the gold file and line. The split must not be max_len-filtered (UsageError), since a skipped long pair's
// line could not be checked.
std::vector<SentenceAlignment> read_gold_alignments(const ParallelSplit& split, const std::string& gold_path);

struct AlignmentEvaluation {
  AlignmentScore prior, posterior;
  std::optional<AlignmentScore> q;  // only for variants with an inference network
};

// AER, precision and recall of the prior, posterior and (if any) q argmax alignments against the gold, one per line
// of the split's files (read_gold_alignments), corpus-level over the lines up to the split's last pair's: every
// line, or only the first pairs' when lava eval --limit dropped the rest after the gold was read. One forward pass
// per batch gives all three.
AlignmentEvaluation evaluate_alignments(Seq2Seq& model, const ParallelSplit& split,
                                        const std::vector<SentenceAlignment>& gold_by_line, int batch_size);
// The same with the gold read from a Pharaoh file first (before the slow part).
AlignmentEvaluation evaluate_alignments(Seq2Seq& model, const ParallelSplit& split, const std::string& gold_path,
                                        int batch_size);

}  // namespace lava
