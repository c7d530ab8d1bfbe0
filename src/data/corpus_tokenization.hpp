#pragma once
// How a corpus's text was tokenised, so that raw text can be tokenised the same way later. A corpus directory
// records it, and a translation model trained on the directory keeps a copy in its metadata:
//   DIR/tokenizer      one line naming the word tokeniser: "lava-words" (data/tokenize.hpp), written by
//                      `lava data gettext`, and copied by `lava data bpe` from its input directory;
//   DIR/subword.model  the sentencepiece BPE model that `lava data bpe` cut every word with (data/subword_model.hpp).
// A directory with neither (a corpus tokenised elsewhere) records nothing: its models translate tokenised input
// only. A `lava data gettext` directory built before the tokenizer file existed is known by its manifest.tsv.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "data/subword_model.hpp"

namespace lava {

inline constexpr const char* kLavaWordTokenizer = "lava-words";  // tokenize() of data/tokenize.hpp
inline constexpr const char* kTokenizerFile = "tokenizer";        // inside a corpus directory

struct CorpusTokenization {
  std::string words;          // the word tokeniser's name, or "" when the corpus does not record one
  std::string subword_model;  // the BPE model's serialized bytes, or "" for a corpus of whole words
  bool recorded() const { return !words.empty() || !subword_model.empty(); }
};

// What DIR records (InputError naming DIR/tokenizer when it names a tokeniser LAVA does not have).
CorpusTokenization read_corpus_tokenization(const std::string& dir);
// Writes DIR/tokenizer naming `words`; removes it when `words` is empty.
void write_tokenizer_record(const std::string& dir, const std::string& words);

// The model-file metadata entries: "tokenizer" (the word tokeniser) and "subword_model" (the BPE model, base64),
// each only when recorded, so a file from a corpus that records nothing is byte for byte what it was.
std::map<std::string, std::string> tokenization_metadata(const CorpusTokenization& t);
// Back from a model file's metadata; an InputError naming `file` for an unknown tokeniser or a bad subword model.
CorpusTokenization tokenization_from_metadata(const std::map<std::string, std::string>& meta, const std::string& file);

// Raw text to the tokens a corpus holds: the word tokeniser, then each word cut into BPE pieces ("@@ " markers).
class SourceTokenizer {
 public:
  SourceTokenizer(const CorpusTokenization& t, const std::string& origin);
  // The tokenised line, tokens separated by single spaces.
  std::string tokenize_line(std::string_view raw) const;

 private:
  bool words_;
  std::optional<SubwordModel> subwords_;
};

}  // namespace lava
