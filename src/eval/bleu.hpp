#pragma once
// Corpus BLEU exactly as Moses' multi-bleu.perl computes it, on already tokenised text with one reference:
//   p_n  = Σ_sentences Σ_ngrams min(count_hyp(g), count_ref(g)) / Σ_sentences max(0, |hyp| − n + 1),  n = 1..4
//   BP   = exp(1 − r/c) if c < r else 1          (c = Σ|hyp|, r = Σ|ref|: corpus totals, not per sentence)
//   BLEU = 100 · BP · exp(¼ Σ_n log p_n),  and 0 as soon as any p_n is 0 (multi-bleu's log(0) = −9999999999).
// Tokens are compared as byte strings; lowercasing and BPE merging ("@@ " removal) are the caller's job,
// as in the paper's pipeline (method.md §4.2). An independent Python copy lives in tools/multi_bleu_check.py.
#include <cstdint>
#include <string>
#include <vector>

namespace lava {

using TokenizedCorpus = std::vector<std::vector<std::string>>;  // one token vector per sentence

struct BleuScore {
  double bleu = 0;             // ×100, as multi-bleu prints it
  double precision[4] = {};    // modified n-gram precisions p_1..p_4, ×100 as multi-bleu prints them
  double brevity_penalty = 0;  // exp(1 − r/c) if c < r, else 1 (0 when c = 0)
  double ratio = 0;            // c / r (0 when r = 0)
  int64_t hyp_len = 0, ref_len = 0;
};

// The sufficient statistics of BLEU: they add over sentences, so any subset's score is a sum of these.
struct BleuCounts {
  int64_t matches[4] = {};  // clipped n-gram matches, n = 1..4
  int64_t totals[4] = {};   // hypothesis n-grams, n = 1..4
  int64_t hyp_len = 0, ref_len = 0;
  BleuCounts& operator+=(const BleuCounts& o);
};

BleuCounts sentence_bleu_counts(const std::vector<std::string>& hyp, const std::vector<std::string>& ref);
BleuScore bleu_from_counts(const BleuCounts& counts);

// hyps.size() must equal refs.size() (LAVA_CHECK). An empty corpus or r = 0 scores 0 (multi-bleu prints
// "BLEU = 0" there too); c = 0 < r also scores 0 (multi-bleu dies dividing by zero).
BleuScore corpus_bleu(const TokenizedCorpus& hyps, const TokenizedCorpus& refs);

// multi-bleu.perl's output line:
//   "BLEU = 33.29, 65.1/40.2/27.3/19.0 (BP=0.981, ratio=0.981, hyp_len=123, ref_len=125)"
std::string format_multi_bleu(const BleuScore& s);

// BLEU restricted to the sentences whose source length falls in a bucket. `upper_bounds` are strictly
// increasing inclusive upper ends: {10, 20} gives the buckets [0,10], [11,20] and [21,∞) (max_len = INT64_MAX).
// Every bucket is returned, empty ones with sentences = 0 and an all-zero score. Source lengths are in
// whatever unit the caller counts (words or subwords); they must be ≥ 0 and one per sentence (LAVA_CHECK).
struct BleuBucket {
  int64_t min_len = 0, max_len = 0;  // inclusive source-length range
  int64_t sentences = 0;
  BleuScore score;
};
std::vector<BleuBucket> bleu_by_source_length(const TokenizedCorpus& hyps, const TokenizedCorpus& refs,
                                              const std::vector<int64_t>& source_lengths,
                                              const std::vector<int64_t>& upper_bounds);

}  // namespace lava
