#pragma once
// Subword units for translation: joint byte-pair encoding learned by Debian's sentencepiece library (BPE model
// type), applied to text that LAVA's word tokeniser has already split. Each word is cut into pieces on its own and
// written with "@@ " continuation markers ("hausboots" -> "haus@@ boot@@ s"), the convention the corpus reader,
// join_bpe and BLEU already follow, so a subword corpus is an ordinary corpus directory.
//
// Why split words one at a time: the pieces of a word then always concatenate back to the word, byte for byte, so
// join_bpe undoes the segmentation exactly and BLEU is computed on the same words as without subwords. A character
// the learner never saw becomes a piece of its own (and <unk> in the vocabulary), never a lost byte.
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace lava {

class SubwordModel {
 public:
  // Learns `types` subword types (the size of sentencepiece's piece table, special pieces included) from tokenised
  // sentences, one per element, words separated by spaces. Deterministic: the same lines give the same model bytes.
  static SubwordModel learn(const std::vector<std::string>& lines, int types);
  // A model from the bytes that bytes() returned; InputError naming `origin` when they are not a BPE model.
  static SubwordModel from_bytes(std::string bytes, const std::string& origin);

  SubwordModel(SubwordModel&&) noexcept;
  SubwordModel& operator=(SubwordModel&&) noexcept;
  ~SubwordModel();

  const std::string& bytes() const { return bytes_; }  // sentencepiece's serialized model
  int types() const;

  // The pieces of one word; their concatenation is the word. An empty word gives no piece.
  std::vector<std::string> split_word(std::string_view word) const;
  // A tokenised line with every word split: "der hausboots ." -> "der haus@@ boot@@ s ."
  std::string segment_line(std::string_view tokenised_line) const;

 private:
  SubwordModel();
  std::string bytes_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  mutable std::unordered_map<std::string, std::vector<std::string>> word_cache_;  // word -> its pieces
};

}  // namespace lava
