#include "data/subword_corpus.hpp"

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/read_file.hpp"
#include "data/corpus_tokenization.hpp"
#include "data/subword_model.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

// The lines of a corpus file, bounded as every text data file is. The corpus reader checks encodings and lengths
// when the segmented copy is read for training; here a line is only text to split at spaces.
std::vector<std::string> read_lines(const std::string& path) {
  const std::string bytes = read_file(path, kTextDataLimit);
  std::vector<std::string> lines;
  for (size_t pos = bytes.starts_with("\xEF\xBB\xBF") ? 3 : 0; pos < bytes.size();) {  // a byte-order mark
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    pos = end + 1;
  }
  return lines;
}

int64_t count_words(const std::string& line) {
  int64_t n = 0;
  bool in_word = false;
  for (char c : line) {
    const bool space = c == ' ' || c == '\t';
    n += !space && !in_word;
    in_word = !space;
  }
  return n;
}

}  // namespace

SubwordCorpusSummary build_subword_corpus(const SubwordCorpusOptions& o) {
  if (o.in_dir.empty()) throw UsageError("--data is required");
  if (o.out_dir.empty()) throw UsageError("--out is required");
  std::error_code ec;
  if (fs::exists(o.out_dir, ec) && fs::equivalent(o.in_dir, o.out_dir, ec))
    throw UsageError("--out must be another directory than --data: the subword files replace nothing");
  const auto path = [](const std::string& dir, const char* split, const std::string& lang) {
    return (fs::path(dir) / fmt::format("{}.{}", split, lang)).string();
  };

  std::vector<std::string> train_lines = read_lines(path(o.in_dir, "train", o.src_lang));
  std::vector<std::string> tgt = read_lines(path(o.in_dir, "train", o.tgt_lang));
  train_lines.insert(train_lines.end(), tgt.begin(), tgt.end());
  if (!o.quiet) std::fprintf(stderr, "bpe: learning %d subword types from %zu training lines\n", o.types, train_lines.size());
  const SubwordModel model = SubwordModel::learn(train_lines, o.types);

  fs::create_directories(o.out_dir, ec);
  if (ec) throw input_error(o.out_dir, 0, "cannot create directory: " + ec.message());
  SubwordCorpusSummary summary;
  summary.types = model.types();
  for (const char* split : {"train", "valid", "test"}) {
    for (const std::string& lang : {o.src_lang, o.tgt_lang}) {
      const std::vector<std::string> lines = read_lines(path(o.in_dir, split, lang));
      std::string out;
      for (const std::string& line : lines) {
        const std::string segmented = model.segment_line(line);
        if (split == std::string_view("train")) {
          summary.train_words += count_words(line);
          summary.train_pieces += count_words(segmented);
        }
        out += segmented;
        out += '\n';
      }
      write_file_atomic(path(o.out_dir, split, lang), out);
    }
  }
  // OUT's words were tokenised as IN's were: raw text for a model trained on OUT goes through IN's word tokeniser.
  write_tokenizer_record(o.out_dir, read_corpus_tokenization(o.in_dir).words);
  write_file_atomic((fs::path(o.out_dir) / kSubwordModelFile).string(), model.bytes());
  return summary;
}

}  // namespace lava
