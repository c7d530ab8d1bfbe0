#include "eval/bleu_multi_ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/check.hpp"

namespace lava {

namespace {

using Tokens = std::vector<std::string>;

std::map<Tokens, int64_t> ngram_counts(const Tokens& s, size_t n) {
  std::map<Tokens, int64_t> counts;
  for (size_t i = 0; i + n <= s.size(); ++i) ++counts[Tokens(s.begin() + ptrdiff_t(i), s.begin() + ptrdiff_t(i + n))];
  return counts;
}

}  // namespace

BleuCounts sentence_bleu_counts_multi(const Tokens& hyp, const std::vector<Tokens>& refs) {
  LAVA_CHECK(!refs.empty(), "BLEU needs at least one reference");
  BleuCounts c;
  c.hyp_len = int64_t(hyp.size());
  c.ref_len = int64_t(refs[0].size());
  for (const Tokens& r : refs) {
    const int64_t d = std::llabs(int64_t(r.size()) - c.hyp_len), best = std::llabs(c.ref_len - c.hyp_len);
    if (d < best || (d == best && int64_t(r.size()) < c.ref_len)) c.ref_len = int64_t(r.size());
  }
  for (size_t n = 1; n <= 4; ++n) {
    std::map<Tokens, int64_t> max_ref;
    for (const Tokens& r : refs)
      for (const auto& [g, k] : ngram_counts(r, n)) max_ref[g] = std::max(max_ref[g], k);
    for (const auto& [g, k] : ngram_counts(hyp, n)) {
      c.totals[n - 1] += k;
      const auto it = max_ref.find(g);
      if (it != max_ref.end()) c.matches[n - 1] += std::min(k, it->second);
    }
  }
  return c;
}

double bleu_up_to(const BleuCounts& c, int n) {
  LAVA_CHECK(n >= 1 && n <= 4, "BLEU-{}", n);
  if (c.hyp_len == 0) return 0;
  double log_sum = 0;
  for (int k = 0; k < n; ++k) {
    if (c.matches[k] == 0 || c.totals[k] == 0) return 0;
    log_sum += std::log(double(c.matches[k]) / double(c.totals[k]));
  }
  const double bp = c.hyp_len < c.ref_len ? std::exp(1.0 - double(c.ref_len) / double(c.hyp_len)) : 1.0;
  return 100.0 * bp * std::exp(log_sum / n);
}

}  // namespace lava
