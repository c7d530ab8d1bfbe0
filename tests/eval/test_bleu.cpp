// Corpus BLEU (multi-bleu.perl formula): hand-computed corpora, the edge cases multi-bleu defines, and the
// source-length buckets.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/bleu.hpp"

using lava::TokenizedCorpus;

namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TokenizedCorpus corpus(const std::vector<std::string>& lines) {
  TokenizedCorpus c;
  for (const auto& l : lines) c.push_back(words(l));
  return c;
}

}  // namespace

TEST_CASE("bleu: n-gram counts of one sentence are clipped by the reference") {
  // hyp "the cat sat on the mat" vs ref "the cat is on the mat":
  //   1-grams: the×2 (ref has 2) + cat + on + mat = 5 of 6 (sat unmatched)
  //   2-grams: "the cat", "on the", "the mat" = 3 of 5
  //   3-grams: "on the mat" = 1 of 4;  4-grams: none of 3
  lava::BleuCounts c = lava::sentence_bleu_counts(words("the cat sat on the mat"), words("the cat is on the mat"));
  CHECK(c.matches[0] == 5);
  CHECK(c.matches[1] == 3);
  CHECK(c.matches[2] == 1);
  CHECK(c.matches[3] == 0);
  CHECK(c.totals[0] == 6);
  CHECK(c.totals[1] == 5);
  CHECK(c.totals[2] == 4);
  CHECK(c.totals[3] == 3);
  CHECK(c.hyp_len == 6);
  CHECK(c.ref_len == 6);

  // Papineni's clipping example: seven "the" against a reference holding two -> 2 of 7, not 7 of 7.
  lava::BleuCounts d = lava::sentence_bleu_counts(words("the the the the the the the"), words("the cat is on the mat"));
  CHECK(d.matches[0] == 2);
  CHECK(d.totals[0] == 7);
  CHECK(d.matches[1] == 0);  // "the the" never occurs in the reference
  CHECK(d.totals[1] == 6);
}

TEST_CASE("bleu: hand-computed two-sentence corpus sums counts before taking precisions") {
  // Sentence A: counts (5,3,1,0) of (6,5,4,3), c = 6, r = 6 (previous test).
  // Sentence B: hyp "a b c d" vs ref "a b c d e": every n-gram matches: (4,3,2,1) of (4,3,2,1), c = 4, r = 5.
  // Corpus: p = 9/10, 6/8, 3/6, 1/4 = 0.9, 0.75, 0.5, 0.25 (sentence A alone would score 0: no 4-gram match).
  //   geometric mean = (0.9·0.75·0.5·0.25)^(1/4) = 0.084375^(1/4) = 0.5389561679
  //   c = 10 < r = 11  ->  BP = exp(1 − 11/10) = exp(−0.1) = 0.9048374180
  //   BLEU = 100 · 0.9048374180 · 0.5389561679 = 48.7667707438
  lava::BleuScore s =
      lava::corpus_bleu(corpus({"the cat sat on the mat", "a b c d"}), corpus({"the cat is on the mat", "a b c d e"}));
  CHECK(s.precision[0] == doctest::Approx(90.0).epsilon(1e-12));
  CHECK(s.precision[1] == doctest::Approx(75.0).epsilon(1e-12));
  CHECK(s.precision[2] == doctest::Approx(50.0).epsilon(1e-12));
  CHECK(s.precision[3] == doctest::Approx(25.0).epsilon(1e-12));
  CHECK(s.brevity_penalty == doctest::Approx(0.9048374180).epsilon(1e-9));
  CHECK(s.ratio == doctest::Approx(10.0 / 11.0).epsilon(1e-12));
  CHECK(s.hyp_len == 10);
  CHECK(s.ref_len == 11);
  CHECK(s.bleu == doctest::Approx(48.7667707438).epsilon(1e-9));
  CHECK(lava::format_multi_bleu(s) ==
        "BLEU = 48.77, 90.0/75.0/50.0/25.0 (BP=0.905, ratio=0.909, hyp_len=10, ref_len=11)");
}

TEST_CASE("bleu: an identical corpus scores 100") {
  TokenizedCorpus c = corpus({"ein kleiner test", "das ist ein längerer satz mit umlauten", "x y z w v"});
  lava::BleuScore s = lava::corpus_bleu(c, c);
  CHECK(s.bleu == doctest::Approx(100.0).epsilon(1e-12));
  CHECK(s.brevity_penalty == 1.0);
  CHECK(s.ratio == 1.0);
  for (double p : s.precision) CHECK(p == 100.0);
}

TEST_CASE("bleu: any zero precision scores 0, as multi-bleu's log(0) = -9999999999 does") {
  SUBCASE("no 4-gram matches although 1..3-grams do") {
    lava::BleuScore s = lava::corpus_bleu(corpus({"the cat sat on the mat"}), corpus({"the cat is on the mat"}));
    CHECK(s.precision[0] > 0);
    CHECK(s.precision[2] > 0);
    CHECK(s.precision[3] == 0);
    CHECK(s.bleu == 0);
  }
  SUBCASE("a corpus of 3-token sentences has no 4-grams at all, so even a perfect copy scores 0") {
    TokenizedCorpus c = corpus({"a b c", "d e f"});
    lava::BleuScore s = lava::corpus_bleu(c, c);
    CHECK(s.precision[2] == 100.0);
    CHECK(s.precision[3] == 0);
    CHECK(s.bleu == 0);
  }
  SUBCASE("no word in common") {
    lava::BleuScore s = lava::corpus_bleu(corpus({"p q r s t"}), corpus({"a b c d e"}));
    CHECK(s.precision[0] == 0);
    CHECK(s.bleu == 0);
  }
}

TEST_CASE("bleu: brevity penalty exp(1 - r/c) only when the hypotheses are shorter") {
  // hyp is a 6-token prefix of an 8-token reference: all precisions 1, BP = exp(1 − 8/6) = exp(−1/3) = 0.7165313106.
  lava::BleuScore s = lava::corpus_bleu(corpus({"a b c d e f"}), corpus({"a b c d e f g h"}));
  for (double p : s.precision) CHECK(p == 100.0);
  CHECK(s.brevity_penalty == doctest::Approx(0.7165313106).epsilon(1e-9));
  CHECK(s.bleu == doctest::Approx(71.65313106).epsilon(1e-9));
  CHECK(s.ratio == doctest::Approx(0.75).epsilon(1e-12));

  // Longer hypotheses are not rewarded: "a b c d e f g h" vs "a b c d e f": p = 6/8, 5/7, 4/6, 3/5, BP = 1.
  //   BLEU = 100 · (0.75 · 5/7 · 2/3 · 0.6)^(1/4) = 100 · (3/14)^(1/4) = 68.0375...
  lava::BleuScore l = lava::corpus_bleu(corpus({"a b c d e f g h"}), corpus({"a b c d e f"}));
  CHECK(l.brevity_penalty == 1.0);
  CHECK(l.bleu == doctest::Approx(100 * std::pow(3.0 / 14.0, 0.25)).epsilon(1e-12));
}

TEST_CASE("bleu: degenerate corpora score 0 and mismatched sizes are a programming error") {
  lava::BleuScore empty = lava::corpus_bleu({}, {});
  CHECK(empty.bleu == 0);
  CHECK(empty.ref_len == 0);
  CHECK(lava::format_multi_bleu(empty) == "BLEU = 0.00, 0.0/0.0/0.0/0.0 (BP=0.000, ratio=0.000, hyp_len=0, ref_len=0)");

  // Empty hypotheses against non-empty references: c = 0, BP -> 0, no NaN.
  lava::BleuScore none = lava::corpus_bleu(corpus({"", ""}), corpus({"a b c d", "e f g h"}));
  CHECK(none.bleu == 0);
  CHECK(none.brevity_penalty == 0);
  CHECK(none.ratio == 0);
  CHECK_FALSE(std::isnan(none.precision[0]));

  CHECK_THROWS_AS(lava::corpus_bleu(corpus({"a"}), corpus({"a", "b"})), std::logic_error);
}

TEST_CASE("bleu: buckets by source length score each subset on its own") {
  TokenizedCorpus hyps = corpus({"a b c d e f", "the cat sat on the mat", "x y z w", "p q r s t u"});
  TokenizedCorpus refs = corpus({"a b c d e f g h", "the cat is on the mat", "x y z w", "p q r s t u"});
  std::vector<int64_t> src_len = {3, 12, 25, 10};
  // bounds {10, 20, 22} -> [0,10] holds sentences 0 and 3, [11,20] sentence 1, [21,22] nothing, [23,∞) sentence 2.
  std::vector<lava::BleuBucket> b = lava::bleu_by_source_length(hyps, refs, src_len, {10, 20, 22});
  REQUIRE(b.size() == 4);
  CHECK(b[0].min_len == 0);
  CHECK(b[0].max_len == 10);
  CHECK(b[1].min_len == 11);
  CHECK(b[2].min_len == 21);
  CHECK(b[2].max_len == 22);
  CHECK(b[3].min_len == 23);
  CHECK(b[3].max_len == std::numeric_limits<int64_t>::max());
  CHECK(b[0].sentences == 2);
  CHECK(b[1].sentences == 1);
  CHECK(b[2].sentences == 0);
  CHECK(b[3].sentences == 1);

  // Bucket 0 = corpus BLEU of sentences 0 and 3: every hypothesis n-gram matches (p_n = 1), c = 6 + 6 = 12,
  // r = 8 + 6 = 14, so BLEU = 100 · exp(1 − 14/12) = 84.6481724891.
  const double expect0 = 84.6481724891;
  CHECK(b[0].score.bleu == doctest::Approx(expect0).epsilon(1e-10));
  CHECK(b[0].score.bleu == doctest::Approx(lava::corpus_bleu({hyps[0], hyps[3]}, {refs[0], refs[3]}).bleu));
  CHECK(b[1].score.bleu == 0);  // the cat sentence has no 4-gram match
  CHECK(b[1].score.hyp_len == 6);
  CHECK(b[2].score.bleu == 0);
  CHECK(b[2].score.ref_len == 0);
  CHECK(b[3].score.bleu == doctest::Approx(100.0));

  // No bounds: one open bucket equal to the whole corpus.
  std::vector<lava::BleuBucket> all = lava::bleu_by_source_length(hyps, refs, src_len, {});
  REQUIRE(all.size() == 1);
  CHECK(all[0].score.bleu == doctest::Approx(lava::corpus_bleu(hyps, refs).bleu).epsilon(1e-12));

  CHECK_THROWS_AS(lava::bleu_by_source_length(hyps, refs, {1, 2}, {10}), std::logic_error);
  CHECK_THROWS_AS(lava::bleu_by_source_length(hyps, refs, src_len, {20, 10}), std::logic_error);
  CHECK_THROWS_AS(lava::bleu_by_source_length(hyps, refs, {1, 2, -3, 4}, {10}), std::logic_error);
}
