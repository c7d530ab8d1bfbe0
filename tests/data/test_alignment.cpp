// Gold word alignments in the Pharaoh format (i-j sure, i?j possible) and the alignment error rate against them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data/alignment.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

TEST_CASE("alignment: Pharaoh alignments read, write and validate") {
  TempDir dir("align");
  std::vector<SentenceLengths> lengths = {{3, 2}, {1, 1}, {4, 4}};
  write_text(dir.file("gold.align"), "0-0 2-1 1?1 0-0 2?1\n\n3p3 1-2\r\n");
  auto gold = read_alignments(dir.file("gold.align"), lengths);
  REQUIRE(gold.size() == 3);
  // Sorted, duplicates merged, a sure link wins over the same possible one.
  CHECK(gold[0] == SentenceAlignment{{0, 0, true}, {1, 1, false}, {2, 1, true}});
  CHECK(gold[1].empty());
  CHECK(gold[2] == SentenceAlignment{{1, 2, true}, {3, 3, false}});

  write_alignments(dir.file("copy.align"), gold);
  CHECK(read_alignments(dir.file("copy.align"), lengths) == gold);
  CHECK(read_alignments(dir.file("copy.align")).size() == 3);

  std::string f = dir.file("bad.align");
  auto bad = [&](const std::string& text, const std::vector<std::string>& needles) {
    write_text(f, text);
    check_input_error_parts([&] { read_alignments(f, lengths); }, needles);
  };
  bad("0-0\n\n0-1 x-2\n", {f + ":3:", "bad link \"x-2\""});
  bad("0-0\n\n0--1\n", {f + ":3:", "bad link"});
  bad("0-0 -1-0\n\n\n", {f + ":1:", "bad link"});
  bad("0-0\n0:0\n\n", {f + ":2:", "bad link"});
  bad("0-0\n\n99999999999-1\n", {f + ":3:", "bad link"});
  bad("3-0\n\n\n", {f + ":1:", "source index 3", "3 tokens"});
  bad("0-0\n0-1\n\n", {f + ":2:", "target index 1", "1 tokens"});
  bad("0-0\n\n", {f, "has 2 lines", "3 sentence pairs"});
  bad("0-0\n\n\n1-1\n", {f + ":4:", "more lines than the 3 sentence pairs"});
  check_input_error_parts([&] { read_alignments(dir.file("none.align"), lengths); }, {dir.file("none.align")});
}

TEST_CASE("alignment: alignment error rate on a hand-computed example") {
  // Sentence 1: S = {0-0, 1-1}, P = S + {2?1}; A = {0-0, 2-1, 1-2}: |A∩S| = 1, |A∩P| = 2.
  // Sentence 2: S = {0-0}; A = {}.
  // Corpus: |A| = 3, |S| = 3, |A∩S| = 1, |A∩P| = 2 -> AER = 1 - 3/6 = 0.5; precision 2/3, recall 1/3.
  std::vector<SentenceAlignment> gold = {{{0, 0, true}, {1, 1, true}, {2, 1, false}}, {{0, 0, true}}};
  std::vector<SentenceAlignment> hyp = {{{2, 1, true}, {0, 0, true}, {1, 2, true}, {0, 0, true}}, {}};
  AlignmentScore s = score_alignments(hyp, gold);
  CHECK(s.hyp == 3);
  CHECK(s.sure == 3);
  CHECK(s.possible == 4);
  CHECK(s.hyp_sure == 1);
  CHECK(s.hyp_possible == 2);
  CHECK(s.aer() == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(s.precision() == doctest::Approx(2.0 / 3.0).epsilon(1e-12));
  CHECK(s.recall() == doctest::Approx(1.0 / 3.0).epsilon(1e-12));
  // Sentence 1 alone: 1 - 3/5.
  CHECK(score_alignments({hyp[0]}, {gold[0]}).aer() == doctest::Approx(0.4).epsilon(1e-12));
  // A perfect hypothesis scores 0, a disjoint one 1.
  CHECK(score_alignments(gold, gold).aer() == doctest::Approx(0.0));
  CHECK(score_alignments({{{5, 5, true}}}, {{{0, 0, true}}}).aer() == doctest::Approx(1.0));
}
