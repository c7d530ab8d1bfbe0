// Parallel corpus side of the translation experiment: vocabulary, corpus reader and its validation, batching,
// Pharaoh alignments and AER, BPE joining.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "data/alignment.hpp"
#include "data/batcher.hpp"
#include "data/parallel_corpus.hpp"
#include "data/vocab.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {


void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// Runs f, which must throw an InputError whose message contains every needle.
template <class F>
void check_input_error(F&& f, const std::vector<std::string>& needles) {
  try {
    f();
    FAIL("no InputError; expected one naming " << needles[0]);
  } catch (const InputError& e) {
    std::string msg = e.what();
    INFO(msg);
    for (const auto& needle : needles) CHECK(msg.find(needle) != std::string::npos);
  }
}

// A small corpus: 6 train pairs, 3 valid, 3 test, with the files named like fairseq's.
struct SmallCorpus {
  TempDir dir{"small"};
  CorpusOptions options;
  SmallCorpus() {
    options.dir = dir.dir.string();
    options.src_lang = "de";
    options.tgt_lang = "en";
    write_bytes(dir.file("train.de"), "das haus\nein haus ist gross\n\nder hund\ndas haus ist klein\nhund\nein hund\n");
    write_bytes(dir.file("train.en"), "the house\na house is big\nnothing\nthe dog\nthe house is small\ndog\na dog\n");
    write_bytes(dir.file("valid.de"), "das auto\nein haus\nein sehr sehr sehr langer satz\n");
    write_bytes(dir.file("valid.en"), "the car\na house\na very very very long sentence\n");
    write_bytes(dir.file("test.de"), "der hund ist gross\nein sehr sehr sehr langer satz\n");
    write_bytes(dir.file("test.en"), "the dog is big\na very very very long sentence\n");
  }
};

std::vector<SentencePair> pairs_with_lengths(const std::vector<std::pair<int, int>>& lengths) {
  std::vector<SentencePair> pairs;
  int line = 1;
  for (auto [s, t] : lengths) {
    SentencePair p;
    for (int k = 0; k < s; ++k) p.src.push_back(10 + k);
    for (int k = 0; k < t; ++k) p.tgt.push_back(20 + k);
    p.line = line++;
    pairs.push_back(std::move(p));
  }
  return pairs;
}

}  // namespace

TEST_CASE("corpus: vocab order, min_freq, max_vocab and control symbols") {
  TokenCounter counts;
  counts.add_line("b a c a b a d\te");  // a 3, b 2, c d e 1
  counts.add_line("<pad> <unk> c");     // control spellings are not counted as words; c -> 2
  CHECK(counts.count("a") == 3);
  CHECK(counts.count("c") == 2);

  Vocab all = Vocab::build(counts, {});
  // a(3), then b and c tie at 2 (bytes order), then d, e tie at 1.
  std::vector<std::string> want = {"<pad>", "<unk>", "<bos>", "<eos>", "a", "b", "c", "d", "e"};
  CHECK(all.tokens() == want);
  CHECK(all.size() == 9);
  CHECK(all.id("a") == 4);
  CHECK(all.id("e") == 8);
  CHECK(all.token(6) == "c");
  CHECK(all.id("never-seen") == Vocab::kUnk);
  CHECK(all.id("<unk>") == Vocab::kUnk);
  // Text can never produce padding, <bos> or <eos>.
  CHECK(all.id("<pad>") == Vocab::kUnk);
  CHECK(all.id("<bos>") == Vocab::kUnk);
  CHECK(all.id("<eos>") == Vocab::kUnk);

  Vocab frequent = Vocab::build(counts, {.min_freq = 2, .max_vocab = 0});
  CHECK(frequent.tokens() == std::vector<std::string>{"<pad>", "<unk>", "<bos>", "<eos>", "a", "b", "c"});
  Vocab capped = Vocab::build(counts, {.min_freq = 1, .max_vocab = 2});
  CHECK(capped.tokens() == std::vector<std::string>{"<pad>", "<unk>", "<bos>", "<eos>", "a", "b"});
  CHECK(capped.id("c") == Vocab::kUnk);
  CHECK_THROWS_AS(Vocab::build(counts, {.min_freq = 0}), UsageError);

  std::vector<int32_t> ids;
  CHECK(capped.encode(" a  zz b\t", ids) == 1);
  CHECK(ids == std::vector<int32_t>{4, Vocab::kUnk, 5});
}

TEST_CASE("corpus: vocab serialisation round trip and validation") {
  TokenCounter counts;
  counts.add_line("über straße café a b");
  Vocab v = Vocab::build(counts, {});
  std::string text = v.to_text();
  CHECK(text.starts_with("<pad>\n<unk>\n<bos>\n<eos>\n"));
  Vocab back = Vocab::from_text(text, "model.safetensors");
  CHECK(back == v);
  CHECK(back.id("straße") == v.id("straße"));
  CHECK(Vocab::from_text("<pad>\r\n<unk>\r\n<bos>\r\n<eos>\r\nx\r\n", "crlf").tokens().back() == "x");

  TempDir dir("vocab");
  v.save(dir.file("vocab.en"));
  CHECK(Vocab::load(dir.file("vocab.en")) == v);

  const std::string specials = "<pad>\n<unk>\n<bos>\n<eos>\n";
  check_input_error([&] { Vocab::from_text(specials + "a\nb\na\n", "model.safetensors"); },
                    {"model.safetensors", "line 7", "duplicate", "line 5"});
  check_input_error([&] { Vocab::from_text("<pad>\n<bos>\n<unk>\n<eos>\n", "model.safetensors"); },
                    {"model.safetensors", "line 2", "<unk>"});
  check_input_error([&] { Vocab::from_text("<pad>\n<unk>\n", "m.st"); }, {"m.st", "control symbols"});
  check_input_error([&] { Vocab::from_text("", "m.st"); }, {"m.st"});
  check_input_error([&] { Vocab::from_text(specials + "a\n\nb\n", "m.st"); }, {"m.st", "line 6", "empty"});
  check_input_error([&] { Vocab::from_text(specials + "a b\n", "m.st"); }, {"m.st", "line 5", "white space"});
  check_input_error([&] { Vocab::from_text(specials + "\xff\n", "m.st"); }, {"m.st", "line 5", "UTF-8"});
  check_input_error([&] { Vocab::from_text(specials + "<unk>\n", "m.st"); }, {"m.st", "line 5", "duplicate"});
  check_input_error([&] { Vocab::load(dir.file("missing.vocab")); }, {"missing.vocab"});
}

TEST_CASE("corpus: reading splits, vocab from train, filters and counts") {
  SmallCorpus c;
  c.options.max_len = 4;
  c.options.keep_target_tokens = true;
  ParallelCorpus corpus = load_parallel_corpus(c.options, {}, {});

  // train: 7 lines, line 3 has an empty source -> skipped; max_len 4 keeps everything else.
  CHECK(corpus.train.stats.lines == 7);
  CHECK(corpus.train.stats.empty_skipped == 1);
  CHECK(corpus.train.stats.long_skipped == 0);
  REQUIRE(corpus.train.pairs.size() == 6);
  CHECK(corpus.train.pairs[2].line == 4);  // "der hund" / "the dog"
  CHECK(corpus.train.src_path == c.dir.file("train.de"));
  // Source vocab from train: haus 3, ein 2, hund 3, das 2, ist 2, der 1, gross 1, klein 1.
  CHECK(corpus.src_vocab.token(4) == "haus");
  CHECK(corpus.src_vocab.token(5) == "hund");
  CHECK(corpus.src_vocab.size() == 4 + 8);
  const SentencePair& p = corpus.train.pairs[2];
  CHECK(p.src == std::vector<int32_t>{corpus.src_vocab.id("der"), corpus.src_vocab.id("hund")});
  CHECK(p.tgt == std::vector<int32_t>{corpus.tgt_vocab.id("the"), corpus.tgt_vocab.id("dog")});
  CHECK(corpus.train.stats.src_unk == 0);
  CHECK(corpus.train.tgt_tokens[2] == std::vector<std::string>{"the", "dog"});
  CHECK(corpus.train.src_tokens.empty());

  // valid: the 6-token pair is over max_len 4 and skipped; "auto"/"car" are unknown.
  CHECK(corpus.valid.stats.long_skipped == 1);
  CHECK(corpus.valid.pairs.size() == 2);
  CHECK(corpus.valid.stats.src_unk == 1);
  CHECK(corpus.valid.stats.tgt_unk == 1);
  CHECK(corpus.valid.pairs[0].src[1] == Vocab::kUnk);
  // test is never length-filtered.
  CHECK(corpus.test.stats.long_skipped == 0);
  CHECK(corpus.test.pairs.size() == 2);
  CHECK(corpus.test.stats.src_max_len == 6);
  CHECK(corpus.test.tgt_tokens[1].size() == 6);
  CHECK(describe(corpus.valid, c.options).find("1 over max_len 4") != std::string::npos);

  // The same split read with the stored vocabularies gives the same ids.
  ParallelSplit again = read_parallel_split(c.options, CorpusSplit::valid, corpus.src_vocab, corpus.tgt_vocab);
  CHECK(again.pairs.size() == corpus.valid.pairs.size());
  CHECK(again.pairs[1].src == corpus.valid.pairs[1].src);

  // Without a max_len filter, valid keeps its long pair.
  c.options.max_len = 0;
  CHECK(read_parallel_split(c.options, CorpusSplit::valid, corpus.src_vocab, corpus.tgt_vocab).pairs.size() == 3);
}

TEST_CASE("corpus: count_parallel_split counts the pairs read_parallel_split keeps, without a vocabulary") {
  SmallCorpus c;
  c.options.max_len = 4;
  const ParallelCorpus corpus = load_parallel_corpus(c.options, {}, {});
  for (CorpusSplit s : {CorpusSplit::train, CorpusSplit::valid, CorpusSplit::test}) {
    const SplitStats n = count_parallel_split(c.options, s);
    const SplitStats& read = (s == CorpusSplit::train ? corpus.train : s == CorpusSplit::valid ? corpus.valid : corpus.test).stats;
    CHECK(n.pairs == read.pairs);
    CHECK(n.lines == read.lines);
    CHECK(n.empty_skipped == read.empty_skipped);
    CHECK(n.long_skipped == read.long_skipped);
    CHECK(n.src_tokens == 0);
  }
  CHECK(count_parallel_split(c.options, CorpusSplit::train).pairs == 6);  // 7 lines, one with an empty source
  CHECK(count_parallel_split(c.options, CorpusSplit::valid).pairs == 2);  // the long pair over max_len 4
  CHECK(count_parallel_split(c.options, CorpusSplit::test).pairs == 2);   // test is never length-filtered
  c.options.max_len = 0;
  CHECK(count_parallel_split(c.options, CorpusSplit::valid).pairs == 3);
}

TEST_CASE("corpus: byte-order mark, CRLF, tabs and a missing final newline are read") {
  TempDir dir("crlf");
  write_bytes(dir.file("train.fr"), "\xEF\xBB\xBFla maison\r\nle  chien\t\r\nun chat");
  write_bytes(dir.file("train.en"), "the house\r\nthe dog\r\na cat");
  CorpusOptions o{.dir = dir.dir.string(), .src_lang = "fr", .tgt_lang = "en"};
  ParallelSplit s = read_parallel_split(o, CorpusSplit::train, Vocab(), Vocab());
  CHECK(s.stats.lines == 3);
  CHECK(s.pairs.size() == 3);
  CHECK(s.pairs[1].src.size() == 2);
  CHECK(s.pairs[2].tgt.size() == 2);
  TokenCounter counts;
  counts.add_line("la");
  CHECK(read_parallel_split(o, CorpusSplit::train, Vocab::build(counts, {}), Vocab()).pairs[0].src[0] == 4);
}

TEST_CASE("corpus: every bad input is an InputError naming file and line") {
  SmallCorpus c;
  Vocab src, tgt;
  auto read = [&](CorpusSplit split) { return read_parallel_split(c.options, split, src, tgt); };

  SUBCASE("missing file") {
    std::filesystem::remove(c.dir.file("valid.en"));
    check_input_error([&] { read(CorpusSplit::valid); }, {c.dir.file("valid.en")});
    check_input_error([&] { load_parallel_corpus(c.options, {}, {}); }, {c.dir.file("valid.en")});
  }
  SUBCASE("different line counts name both files and both counts") {
    write_bytes(c.dir.file("valid.en"), "the car\na house\n");
    check_input_error([&] { read(CorpusSplit::valid); },
                      {c.dir.file("valid.de"), "3 lines", c.dir.file("valid.en"), "2 lines"});
  }
  SUBCASE("invalid UTF-8") {
    write_bytes(c.dir.file("test.en"), "the dog is big\na very \xC3\x28 long sentence\n");
    check_input_error([&] { read(CorpusSplit::test); }, {c.dir.file("test.en") + ":2:", "UTF-8", "byte 8"});
    write_bytes(c.dir.file("test.de"), "\xED\xA0\x80 surrogate\nx\n");  // encoded surrogate
    check_input_error([&] { read(CorpusSplit::test); }, {c.dir.file("test.de") + ":1:", "UTF-8"});
  }
  SUBCASE("a line over max_tokens_hard") {
    std::string long_line;
    for (int k = 0; k < 5231; ++k) long_line += "w ";
    write_bytes(c.dir.file("valid.de"), "das auto\n" + long_line + "\nx\n");
    check_input_error([&] { read(CorpusSplit::valid); },
                      {c.dir.file("valid.de") + ":2:", "line has 5231 tokens, more than 1000"});
    c.options.max_tokens_hard = 6000;
    CHECK(read(CorpusSplit::valid).stats.src_max_len == 5231);
  }
  SUBCASE("a huge line without spaces or newlines is one token, not a crash") {
    std::string huge(1 << 20, 'z');
    huge += "\nx\n";
    write_bytes(c.dir.file("test.de"), huge);
    CHECK(read(CorpusSplit::test).pairs[0].src.size() == 1);
  }
  SUBCASE("empty training set") {
    write_bytes(c.dir.file("train.de"), "\n  \n");
    write_bytes(c.dir.file("train.en"), "a\nb\n");
    check_input_error([&] { load_parallel_corpus(c.options, {}, {}); },
                      {c.dir.file("train.de"), "no sentence pairs", "2 with an empty side"});
    write_bytes(c.dir.file("train.de"), "");
    write_bytes(c.dir.file("train.en"), "");
    check_input_error([&] { load_parallel_corpus(c.options, {}, {}); }, {c.dir.file("train.de"), "no sentence pairs"});
  }
  SUBCASE("empty training set after the max_len filter") {
    write_bytes(c.dir.file("train.de"), "a b\nc d\n\ne f g\n");
    write_bytes(c.dir.file("train.en"), "x y\nz\nq\nr\n");
    c.options.max_len = 1;
    check_input_error([&] { load_parallel_corpus(c.options, {}, {}); },
                      {c.dir.file("train.de"), "no sentence pairs in 4 lines", "1 with an empty side",
                       "3 longer than max_len 1"});
    c.options.max_len = 2;
    CHECK(load_parallel_corpus(c.options, {}, {}).train.pairs.size() == 2);
  }
}

TEST_CASE("corpus: join_bpe") {
  CHECK(join_bpe("ein Haus@@ boot@@ s .") == "ein Hausboots .");
  CHECK(join_bpe("a@@ b@@") == "ab");
  CHECK(join_bpe("a@@ b@@ ") == "ab");
  CHECK(join_bpe("e@@ mail @@") == "email ");
  CHECK(join_bpe("no markers here") == "no markers here");
  CHECK(join_bpe("") == "");
  CHECK(join_bpe("x@@y @@z") == "x@@y @@z");  // only "@@ " and a final "@@" are markers
}

TEST_CASE("corpus: make_batch pads, masks and shifts the target") {
  std::vector<SentencePair> pairs(2);
  pairs[0] = {{11, 12, 13}, {21, 22}, 1};
  pairs[1] = {{14}, {23, 24, 25, 26}, 2};
  std::vector<int> index = {1, 0};
  Batch b = make_batch(pairs, index);
  CHECK(b.B == 2);
  CHECK(b.S == 3);
  CHECK(b.T == 5);
  CHECK(b.src == std::vector<int32_t>{14, 0, 0, 11, 12, 13});
  CHECK(b.src_mask == std::vector<uint8_t>{0, 1, 1, 0, 0, 0});
  CHECK(b.src_len == std::vector<int32_t>{1, 3});
  const int bos = Vocab::kBos, eos = Vocab::kEos;
  CHECK(b.tgt_in == std::vector<int32_t>{bos, 23, 24, 25, 26, bos, 21, 22, 0, 0});
  CHECK(b.tgt_out == std::vector<int32_t>{23, 24, 25, 26, eos, 21, 22, eos, 0, 0});
  CHECK(b.tgt_len == std::vector<int32_t>{5, 3});
  CHECK(b.index == index);
  CHECK(b.target_tokens() == 8);
}

TEST_CASE("corpus: train batches cover every pair once, are bucketed, deterministic and vary by epoch") {
  std::vector<std::pair<int, int>> lengths;
  for (int k = 0; k < 1000; ++k) lengths.push_back({1 + (k * 37) % 50, 1 + (k * 11) % 40});
  auto pairs = pairs_with_lengths(lengths);
  BatchOptions o{.batch_size = 32, .window_batches = 8};

  auto e0 = train_batches(pairs, o, 7, 0);
  auto e1 = train_batches(pairs, o, 7, 1);
  CHECK(train_batches(pairs, o, 7, 0) == e0);
  CHECK(e1 != e0);
  CHECK(train_batches(pairs, o, 8, 0) != e0);
  for (const auto* epoch : {&e0, &e1}) {
    std::vector<int> seen(pairs.size(), 0);
    size_t spread_sum = 0;
    for (const auto& batch : *epoch) {
      CHECK(!batch.empty());
      CHECK(batch.size() <= 32);
      int lo = 1 << 30, hi = 0;
      for (int k : batch) {
        ++seen[size_t(k)];
        lo = std::min(lo, int(pairs[size_t(k)].src.size()));
        hi = std::max(hi, int(pairs[size_t(k)].src.size()));
      }
      spread_sum += size_t(hi - lo);
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    // A window of 256 pairs over 50 source lengths: a sorted batch of 32 spans about 6-7 lengths, against ~48 for
    // a random batch.
    CHECK(double(spread_sum) / double(epoch->size()) < 12.0);
  }
  // Batch order is shuffled too: the first batch is not always from the first window.
  std::set<int> first_pairs;
  for (int e = 0; e < 8; ++e) first_pairs.insert(train_batches(pairs, o, 7, e)[0][0]);
  CHECK(first_pairs.size() > 4);

  CHECK_THROWS_AS(train_batches(pairs, {.batch_size = 0}, 1, 0), UsageError);
  CHECK(train_batches({}, o, 1, 0).empty());
}

TEST_CASE("corpus: eval batches are sorted by length, unshuffled, and index every pair once") {
  auto pairs = pairs_with_lengths({{5, 1}, {2, 9}, {2, 3}, {7, 7}, {1, 1}});
  auto batches = eval_batches(pairs, 2);
  CHECK(batches == std::vector<std::vector<int>>{{4, 2}, {1, 0}, {3}});
  Batch last = make_batch(pairs, batches[2]);
  CHECK(last.index == std::vector<int>{3});
  CHECK(pairs[size_t(last.index[0])].line == 4);
}

TEST_CASE("corpus: Pharaoh alignments read, write and validate") {
  TempDir dir("align");
  std::vector<SentenceLengths> lengths = {{3, 2}, {1, 1}, {4, 4}};
  write_bytes(dir.file("gold.align"), "0-0 2-1 1?1 0-0 2?1\n\n3p3 1-2\r\n");
  auto gold = read_alignments(dir.file("gold.align"), lengths);
  REQUIRE(gold.size() == 3);
  CHECK(gold[0] == SentenceAlignment{{0, 0, true}, {1, 1, false}, {2, 1, true}});  // sorted, duplicates merged, sure wins
  CHECK(gold[1].empty());
  CHECK(gold[2] == SentenceAlignment{{1, 2, true}, {3, 3, false}});

  write_alignments(dir.file("copy.align"), gold);
  CHECK(read_alignments(dir.file("copy.align"), lengths) == gold);
  CHECK(read_alignments(dir.file("copy.align")).size() == 3);

  std::string f = dir.file("bad.align");
  auto bad = [&](const std::string& text, const std::vector<std::string>& needles) {
    write_bytes(f, text);
    check_input_error([&] { read_alignments(f, lengths); }, needles);
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
  check_input_error([&] { read_alignments(dir.file("none.align"), lengths); }, {dir.file("none.align")});
}

TEST_CASE("corpus: alignment error rate on a hand-computed example") {
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
