#include "eval/bleu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/check.hpp"

namespace lava {

namespace {

using Tokens = std::vector<std::string>;

// Lexicographic order of the n-grams starting at a and b (both must fit in their sentences).
bool ngram_less(const Tokens& s, size_t a, const Tokens& t, size_t b, int n) {
  return std::lexicographical_compare(s.begin() + a, s.begin() + a + n, t.begin() + b, t.begin() + b + n);
}

bool ngram_equal(const Tokens& s, size_t a, const Tokens& t, size_t b, int n) {
  return std::equal(s.begin() + a, s.begin() + a + n, t.begin() + b);
}

// Start positions of all n-grams of s, sorted so that equal n-grams form adjacent runs.
std::vector<size_t> sorted_ngram_starts(const Tokens& s, int n) {
  std::vector<size_t> starts;
  if (s.size() < size_t(n)) return starts;
  starts.resize(s.size() - size_t(n) + 1);
  for (size_t i = 0; i < starts.size(); ++i) starts[i] = i;
  std::stable_sort(starts.begin(), starts.end(), [&](size_t a, size_t b) { return ngram_less(s, a, s, b, n); });
  return starts;
}

// Length of the run of equal n-grams beginning at index i of the sorted starts.
size_t run_length(const Tokens& s, const std::vector<size_t>& starts, size_t i, int n) {
  size_t j = i + 1;
  while (j < starts.size() && ngram_equal(s, starts[i], s, starts[j], n)) ++j;
  return j - i;
}

}  // namespace

BleuCounts& BleuCounts::operator+=(const BleuCounts& o) {
  for (int k = 0; k < 4; ++k) {
    matches[k] += o.matches[k];
    totals[k] += o.totals[k];
  }
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
  return *this;
}

BleuCounts sentence_bleu_counts(const Tokens& hyp, const Tokens& ref) {
  // matches[n-1] = Σ_g min(count_hyp(g), count_ref(g)) over distinct n-grams g: a merge of the two sorted
  // n-gram lists, run by run (multi-bleu does the same with a hash of "n w1 ... wn" strings).
  BleuCounts c;
  c.hyp_len = int64_t(hyp.size());
  c.ref_len = int64_t(ref.size());
  for (int n = 1; n <= 4; ++n) {
    const std::vector<size_t> h = sorted_ngram_starts(hyp, n);
    const std::vector<size_t> r = sorted_ngram_starts(ref, n);
    c.totals[n - 1] = int64_t(h.size());
    size_t i = 0, j = 0;
    while (i < h.size() && j < r.size()) {
      if (ngram_less(hyp, h[i], ref, r[j], n)) {
        i += run_length(hyp, h, i, n);
      } else if (ngram_less(ref, r[j], hyp, h[i], n)) {
        j += run_length(ref, r, j, n);
      } else {
        const size_t hn = run_length(hyp, h, i, n), rn = run_length(ref, r, j, n);
        c.matches[n - 1] += int64_t(std::min(hn, rn));
        i += hn;
        j += rn;
      }
    }
  }
  return c;
}

BleuScore bleu_from_counts(const BleuCounts& counts) {
  BleuScore s;
  s.hyp_len = counts.hyp_len;
  s.ref_len = counts.ref_len;
  if (counts.ref_len == 0) return s;  // multi-bleu: "BLEU = 0, 0/0/0/0 (BP=0, ratio=0, ...)"
  const double c = double(counts.hyp_len), r = double(counts.ref_len);
  bool any_zero = false;
  double log_sum = 0;  // Σ_n log p_n
  for (int k = 0; k < 4; ++k) {
    const double p = counts.totals[k] > 0 ? double(counts.matches[k]) / double(counts.totals[k]) : 0.0;
    s.precision[k] = 100 * p;
    if (p == 0)
      any_zero = true;
    else
      log_sum += std::log(p);
  }
  s.ratio = c / r;
  // exp(1 − r/c) → 0 as c → 0; multi-bleu itself divides by zero there.
  s.brevity_penalty = c >= r ? 1.0 : (c == 0 ? 0.0 : std::exp(1 - r / c));
  // Same operation order as multi-bleu (BP · exp(...), then ×100), so the digits match it to the last bit.
  s.bleu = any_zero ? 0.0 : 100 * (s.brevity_penalty * std::exp(log_sum / 4));
  return s;
}

BleuScore corpus_bleu(const TokenizedCorpus& hyps, const TokenizedCorpus& refs) {
  LAVA_CHECK(hyps.size() == refs.size(), "corpus_bleu: {} hypotheses but {} references", hyps.size(), refs.size());
  BleuCounts total;
  for (size_t i = 0; i < hyps.size(); ++i) total += sentence_bleu_counts(hyps[i], refs[i]);
  return bleu_from_counts(total);
}

std::string format_multi_bleu(const BleuScore& s) {
  return fmt::format("BLEU = {:.2f}, {:.1f}/{:.1f}/{:.1f}/{:.1f} (BP={:.3f}, ratio={:.3f}, hyp_len={}, ref_len={})",
                     s.bleu, s.precision[0], s.precision[1], s.precision[2], s.precision[3], s.brevity_penalty, s.ratio,
                     s.hyp_len, s.ref_len);
}

std::vector<BleuBucket> bleu_by_source_length(const TokenizedCorpus& hyps, const TokenizedCorpus& refs,
                                              const std::vector<int64_t>& source_lengths,
                                              const std::vector<int64_t>& upper_bounds) {
  LAVA_CHECK(hyps.size() == refs.size(), "bleu_by_source_length: {} hypotheses but {} references", hyps.size(),
             refs.size());
  LAVA_CHECK(source_lengths.size() == hyps.size(), "bleu_by_source_length: {} source lengths for {} sentences",
             source_lengths.size(), hyps.size());
  for (size_t b = 0; b < upper_bounds.size(); ++b)
    LAVA_CHECK(upper_bounds[b] >= 0 && (b == 0 || upper_bounds[b] > upper_bounds[b - 1]),
               "bleu_by_source_length: bucket bounds must be non-negative and strictly increasing");

  std::vector<BleuBucket> buckets(upper_bounds.size() + 1);
  for (size_t b = 0; b < buckets.size(); ++b) {
    buckets[b].min_len = b == 0 ? 0 : upper_bounds[b - 1] + 1;
    buckets[b].max_len = b < upper_bounds.size() ? upper_bounds[b] : std::numeric_limits<int64_t>::max();
  }
  std::vector<BleuCounts> counts(buckets.size());
  for (size_t i = 0; i < hyps.size(); ++i) {
    const int64_t len = source_lengths[i];
    LAVA_CHECK(len >= 0, "bleu_by_source_length: negative source length {} at sentence {}", len, i);
    // First bucket whose inclusive upper bound is ≥ len; past the last bound is the open bucket.
    const size_t b = size_t(std::lower_bound(upper_bounds.begin(), upper_bounds.end(), len) - upper_bounds.begin());
    counts[b] += sentence_bleu_counts(hyps[i], refs[i]);
    buckets[b].sentences += 1;
  }
  for (size_t b = 0; b < buckets.size(); ++b)
    if (buckets[b].sentences > 0) buckets[b].score = bleu_from_counts(counts[b]);
  return buckets;
}

}  // namespace lava
