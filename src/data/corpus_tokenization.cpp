#include "data/corpus_tokenization.hpp"

#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/base64.hpp"
#include "core/check.hpp"
#include "core/read_file.hpp"
#include "data/subword_corpus.hpp"
#include "data/tokenize.hpp"
#include "data/vocab.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

void check_word_tokenizer(const std::string& name, const std::string& origin) {
  if (!name.empty() && name != kLavaWordTokenizer)
    throw input_error(origin, 0, fmt::format("unknown word tokenizer '{}' (LAVA has '{}')", name, kLavaWordTokenizer));
}

}  // namespace

CorpusTokenization read_corpus_tokenization(const std::string& dir) {
  CorpusTokenization t;
  const fs::path record = fs::path(dir) / kTokenizerFile;
  std::error_code ec;
  if (fs::exists(record, ec)) {
    std::string text = read_file(record.string(), kSettingsLimit);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    check_word_tokenizer(text, record.string());
    if (text.empty()) throw input_error(record.string(), 0, "names no word tokenizer");
    t.words = text;
  } else if (fs::exists(fs::path(dir) / "manifest.tsv", ec)) {
    t.words = kLavaWordTokenizer;  // only `lava data gettext` writes manifest.tsv
  }
  const fs::path subwords = fs::path(dir) / kSubwordModelFile;
  if (fs::exists(subwords, ec)) {
    t.subword_model = read_file(subwords.string(), kModelLimit);
    (void)SubwordModel::from_bytes(t.subword_model, subwords.string());  // refused now, not when translating
  }
  return t;
}

void write_tokenizer_record(const std::string& dir, const std::string& words) {
  const fs::path record = fs::path(dir) / kTokenizerFile;
  std::error_code ec;
  if (words.empty())
    fs::remove(record, ec);  // a record left from an earlier build would be wrong now
  else
    write_file_atomic(record.string(), words + "\n");
}

std::map<std::string, std::string> tokenization_metadata(const CorpusTokenization& t) {
  std::map<std::string, std::string> meta;
  if (!t.words.empty()) meta["tokenizer"] = t.words;
  if (!t.subword_model.empty()) meta["subword_model"] = base64_encode(t.subword_model);
  return meta;
}

CorpusTokenization tokenization_from_metadata(const std::map<std::string, std::string>& meta, const std::string& file) {
  CorpusTokenization t;
  if (const auto it = meta.find("tokenizer"); it != meta.end()) {
    check_word_tokenizer(it->second, file);
    if (it->second.empty()) throw input_error(file, 0, "model metadata: empty \"tokenizer\"");
    t.words = it->second;
  }
  if (const auto it = meta.find("subword_model"); it != meta.end()) {
    std::optional<std::string> bytes = base64_decode(it->second);
    if (!bytes || bytes->empty()) throw input_error(file, 0, "model metadata: \"subword_model\" is not base64");
    t.subword_model = std::move(*bytes);
  }
  return t;
}

SourceTokenizer::SourceTokenizer(const CorpusTokenization& t, const std::string& origin) : words_(!t.words.empty()) {
  if (!t.subword_model.empty()) subwords_ = SubwordModel::from_bytes(t.subword_model, origin);
}

std::string SourceTokenizer::tokenize_line(std::string_view raw) const {
  std::string line;
  if (words_) {
    line = join_tokens(tokenize(raw));
  } else {  // whole words as they are, white space of any kind between them
    for (const std::string_view w : split_tokens(raw)) {
      if (!line.empty()) line += ' ';
      line += w;
    }
  }
  return subwords_ ? subwords_->segment_line(line) : line;
}

}  // namespace lava
