#pragma once
// Word alignments in the Pharaoh format (Moses, fast_align, GIZA++ converters) and the alignment error rate.
//
// File format: one line per sentence pair, line k for pair k; a line is white-space separated links "i-j" meaning
// source token i (0-based) is aligned to target token j (0-based), source index first. An empty line is a pair with
// no links. Gold sets that distinguish sure from possible links mark the possible ones "i?j" (CMU/clab style) or
// "ipj" (lilt alignment-scripts style); both are read as possible. Everything else is sure. Duplicate links are
// merged (a link given as both sure and possible is sure). We write hypotheses with "i-j" only.
//
// AER (Och & Ney 2003), with sure links S, possible links P ⊇ S and hypothesis links A, summed over the corpus:
//   AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)
// Without possible marks P = S and AER = 1 - 2|A∩S| / (|A| + |S|) = 1 - F1.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace lava {

struct AlignmentLink {
  int src = 0, tgt = 0;  // 0-based token positions
  bool sure = true;
  bool operator==(const AlignmentLink&) const = default;
};

// Links of one sentence pair, sorted by (src, tgt), without duplicates.
using SentenceAlignment = std::vector<AlignmentLink>;

struct SentenceLengths {
  int src = 0, tgt = 0;
};

// Reads a Pharaoh file. With `lengths` non-empty, the file must have exactly lengths.size() lines and every link
// must lie inside its sentence pair; with `lengths` empty only the syntax is checked. Each problem is one
// InputError "PATH:LINE: what" (a bad link names the link; a line-count mismatch names both counts).
std::vector<SentenceAlignment> read_alignments(const std::string& path, std::span<const SentenceLengths> lengths = {});

// Writes one line per sentence pair ("i-j" for sure, "i?j" for possible links), atomically.
void write_alignments(const std::string& path, const std::vector<SentenceAlignment>& alignments);

// Sorts by (src, tgt) and merges duplicates (sure wins).
void normalize_alignment(SentenceAlignment& links);

struct AlignmentScore {
  int64_t hyp = 0;           // |A|
  int64_t sure = 0;          // |S|
  int64_t possible = 0;      // |P| (includes S)
  int64_t hyp_sure = 0;      // |A∩S|
  int64_t hyp_possible = 0;  // |A∩P|
  double aer() const;        // 1 - (|A∩S| + |A∩P|) / (|A| + |S|); 0 when both A and S are empty
  double precision() const;  // |A∩P| / |A|  (1 when A is empty)
  double recall() const;     // |A∩S| / |S|  (1 when S is empty)
};

// Corpus-level counts: the sums over sentence pairs, not an average of per-sentence rates. Hypothesis links count
// as links whatever their sure flag. Both lists must have the same length (LAVA_CHECK).
AlignmentScore score_alignments(const std::vector<SentenceAlignment>& hypothesis,
                                const std::vector<SentenceAlignment>& gold);

}  // namespace lava
