// Subword units: the BPE learner's determinism, pieces that always join back to their word, and `lava data bpe`'s
// corpus, whose lines join back to the input's words one for one.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "data/parallel_corpus.hpp"
#include "data/subword_corpus.hpp"
#include "data/subword_model.hpp"
#include "data/synth_task.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

std::vector<std::string> sample_lines() {
  std::vector<std::string> lines;
  const char* words[] = {"datei", "dateien", "dateiname", "ordner", "ordnernamen", "öffnen", "geöffnet", "file",
                         "files", "filename", "folder", "folders", "open", "opened", "."};
  for (int k = 0; k < 400; ++k) {
    std::string line;
    for (int j = 0; j < 6; ++j) line += std::string(j ? " " : "") + words[(k * 7 + j * 5 + k / 3) % 15];
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "a  b c " -> "a b c": the corpus reader's view of a line's words.
std::string words_of(const std::string& line) {
  std::istringstream in(line);
  std::string w, out;
  while (in >> w) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

TEST_CASE("subword: the learner is deterministic and splits words into pieces that join back") {
  const std::vector<std::string> lines = sample_lines();
  const SubwordModel a = SubwordModel::learn(lines, 40);
  const SubwordModel b = SubwordModel::learn(lines, 40);
  CHECK(a.bytes() == b.bytes());
  CHECK(a.types() <= 40);
  CHECK(a.types() > 20);

  // A frequent word is one piece or a few; every word, seen or not, joins back byte for byte.
  for (const std::string w : {"dateiname", "ordnernamen", "geöffnet", "zzqx", "ü", "x"}) {
    const std::vector<std::string> pieces = a.split_word(w);
    std::string joined;
    for (const std::string& p : pieces) {
      CHECK(!p.empty());
      joined += p;
    }
    CHECK(joined == w);
  }
  CHECK(a.split_word("").empty());
  // More types, fewer pieces a word: the merges are learned by frequency.
  const SubwordModel big = SubwordModel::learn(lines, 80);
  CHECK(big.split_word("ordnernamen").size() <= a.split_word("ordnernamen").size());
  CHECK(a.split_word("ordnernamen").size() > 1);

  const std::string line = "die  ordnernamen wurden geöffnet .";
  const std::string segmented = a.segment_line(line);
  CHECK(segmented.find("@@ ") != std::string::npos);
  CHECK(join_bpe(segmented) == words_of(line));
}

TEST_CASE("subword: a model round-trips through its bytes, and bytes that are no model are refused by name") {
  const SubwordModel a = SubwordModel::learn(sample_lines(), 40);
  const SubwordModel b = SubwordModel::from_bytes(a.bytes(), "m.safetensors");
  CHECK(b.segment_line("ordnernamen dateien") == a.segment_line("ordnernamen dateien"));
  try {
    SubwordModel::from_bytes("not a model", "m.safetensors");
    FAIL("accepted garbage");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).starts_with("m.safetensors: not a subword model"));
  }
  CHECK_THROWS_AS(SubwordModel::learn(sample_lines(), 3), UsageError);
}

TEST_CASE("subword: lava data bpe's corpus keeps every line and joins back to the input's words") {
  TempDir tmp("subword");
  SynthOptions so;
  so.out_dir = tmp.file("words");
  so.train = 300, so.valid = 20, so.test = 20, so.vocab = 60, so.quiet = true;
  build_synth_task(so);
  SubwordCorpusOptions o;
  o.in_dir = so.out_dir;
  o.out_dir = tmp.file("bpe");
  o.types = 60;
  o.quiet = true;
  const SubwordCorpusSummary s = build_subword_corpus(o);
  CHECK(s.train_pieces > s.train_words);  // 60 types cannot hold every word whole
  for (const char* split : {"train", "valid", "test"})
    for (const char* lang : {"de", "en"}) {
      const std::vector<std::string> in = file_lines(fmt::format("{}/{}.{}", o.in_dir, split, lang));
      const std::vector<std::string> out = file_lines(fmt::format("{}/{}.{}", o.out_dir, split, lang));
      REQUIRE(in.size() == out.size());
      for (size_t k = 0; k < in.size(); ++k) CHECK(join_bpe(out[k]) == words_of(in[k]));
    }
  const SubwordModel m = SubwordModel::from_bytes(read_file(o.out_dir + "/subword.model"), "subword.model");
  CHECK(m.types() == s.types);
  CHECK_THROWS_AS(build_subword_corpus({.in_dir = o.in_dir, .out_dir = o.in_dir}), UsageError);
}
