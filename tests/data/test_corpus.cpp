// Parallel corpus side of the translation experiment: vocabulary, corpus reader and its validation, batching and
// BPE joining (the gold alignments and AER are in test_alignment.cpp).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "data/batcher.hpp"
#include "data/parallel_corpus.hpp"
#include "data/vocab.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

// A small corpus: 6 train pairs, 3 valid, 3 test, with the files named like fairseq's.
struct SmallCorpus {
  TempDir dir{"small"};
  CorpusOptions options;
  SmallCorpus() {
    options.dir = dir.dir.string();
    options.src_lang = "de";
    options.tgt_lang = "en";
    write_text(dir.file("train.de"), "das haus\nein haus ist gross\n\nder hund\ndas haus ist klein\nhund\nein hund\n");
    write_text(dir.file("train.en"), "the house\na house is big\nnothing\nthe dog\nthe house is small\ndog\na dog\n");
    write_text(dir.file("valid.de"), "das auto\nein haus\nein sehr sehr sehr langer satz\n");
    write_text(dir.file("valid.en"), "the car\na house\na very very very long sentence\n");
    write_text(dir.file("test.de"), "der hund ist gross\nein sehr sehr sehr langer satz\n");
    write_text(dir.file("test.en"), "the dog is big\na very very very long sentence\n");
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
  check_input_error_parts([&] { Vocab::from_text(specials + "a\nb\na\n", "model.safetensors"); },
                    {"model.safetensors", "line 7", "duplicate", "line 5"});
  check_input_error_parts([&] { Vocab::from_text("<pad>\n<bos>\n<unk>\n<eos>\n", "model.safetensors"); },
                    {"model.safetensors", "line 2", "<unk>"});
  check_input_error_parts([&] { Vocab::from_text("<pad>\n<unk>\n", "m.st"); }, {"m.st", "control symbols"});
  check_input_error_parts([&] { Vocab::from_text("", "m.st"); }, {"m.st"});
  check_input_error_parts([&] { Vocab::from_text(specials + "a\n\nb\n", "m.st"); }, {"m.st", "line 6", "empty"});
  check_input_error_parts([&] { Vocab::from_text(specials + "a b\n", "m.st"); }, {"m.st", "line 5", "white space"});
  check_input_error_parts([&] { Vocab::from_text(specials + "\xff\n", "m.st"); }, {"m.st", "line 5", "UTF-8"});
  check_input_error_parts([&] { Vocab::from_text(specials + "<unk>\n", "m.st"); }, {"m.st", "line 5", "duplicate"});
  check_input_error_parts([&] { Vocab::load(dir.file("missing.vocab")); }, {"missing.vocab"});
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
  write_text(dir.file("train.fr"), "\xEF\xBB\xBFla maison\r\nle  chien\t\r\nun chat");
  write_text(dir.file("train.en"), "the house\r\nthe dog\r\na cat");
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
    check_input_error_parts([&] { read(CorpusSplit::valid); }, {c.dir.file("valid.en")});
    check_input_error_parts([&] { load_parallel_corpus(c.options, {}, {}); }, {c.dir.file("valid.en")});
  }
  SUBCASE("different line counts name both files and both counts") {
    write_text(c.dir.file("valid.en"), "the car\na house\n");
    check_input_error_parts([&] { read(CorpusSplit::valid); },
                      {c.dir.file("valid.de"), "3 lines", c.dir.file("valid.en"), "2 lines"});
  }
  SUBCASE("invalid UTF-8") {
    write_text(c.dir.file("test.en"), "the dog is big\na very \xC3\x28 long sentence\n");
    check_input_error_parts([&] { read(CorpusSplit::test); }, {c.dir.file("test.en") + ":2:", "UTF-8", "byte 8"});
    write_text(c.dir.file("test.de"), "\xED\xA0\x80 surrogate\nx\n");  // encoded surrogate
    check_input_error_parts([&] { read(CorpusSplit::test); }, {c.dir.file("test.de") + ":1:", "UTF-8"});
  }
  SUBCASE("a line over max_tokens_hard") {
    std::string long_line;
    for (int k = 0; k < 5231; ++k) long_line += "w ";
    write_text(c.dir.file("valid.de"), "das auto\n" + long_line + "\nx\n");
    check_input_error_parts([&] { read(CorpusSplit::valid); },
                      {c.dir.file("valid.de") + ":2:", "line has 5231 tokens, more than 1000"});
    c.options.max_tokens_hard = 6000;
    CHECK(read(CorpusSplit::valid).stats.src_max_len == 5231);
  }
  SUBCASE("a huge line without spaces or newlines is one token, not a crash") {
    std::string huge(1 << 20, 'z');
    huge += "\nx\n";
    write_text(c.dir.file("test.de"), huge);
    CHECK(read(CorpusSplit::test).pairs[0].src.size() == 1);
  }
  SUBCASE("empty training set") {
    write_text(c.dir.file("train.de"), "\n  \n");
    write_text(c.dir.file("train.en"), "a\nb\n");
    check_input_error_parts([&] { load_parallel_corpus(c.options, {}, {}); },
                      {c.dir.file("train.de"), "no sentence pairs", "2 with an empty side"});
    write_text(c.dir.file("train.de"), "");
    write_text(c.dir.file("train.en"), "");
    check_input_error_parts([&] { load_parallel_corpus(c.options, {}, {}); }, {c.dir.file("train.de"), "no sentence pairs"});
  }
  SUBCASE("empty training set after the max_len filter") {
    write_text(c.dir.file("train.de"), "a b\nc d\n\ne f g\n");
    write_text(c.dir.file("train.en"), "x y\nz\nq\nr\n");
    c.options.max_len = 1;
    check_input_error_parts([&] { load_parallel_corpus(c.options, {}, {}); },
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
