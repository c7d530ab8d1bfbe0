#pragma once
// BLEU against several references per sentence, as multi-bleu.perl computes it with more than one reference file:
//   clipped matches  Σ_g min(count_hyp(g), max_r count_r(g))   for the n-grams g of the hypothesis, n = 1..4
//   reference length the reference length closest to |hyp| (ties: the shorter), summed over the corpus
// then eval/bleu.hpp's bleu_from_counts (brevity penalty on the corpus totals, geometric mean of p_1..p_4).
#include <string>
#include <vector>

#include "eval/bleu.hpp"

namespace lava {

BleuCounts sentence_bleu_counts_multi(const std::vector<std::string>& hyp,
                                      const std::vector<std::vector<std::string>>& refs);

// BLEU-n (×100) of corpus counts: BP · exp((1/n) Σ_{k≤n} log p_k), 0 if any of those p_k is 0 (BLEU-4 equals
// bleu_from_counts(c).bleu).
double bleu_up_to(const BleuCounts& c, int n);

}  // namespace lava
