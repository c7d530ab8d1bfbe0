#include "data/subword_model.hpp"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include "core/check.hpp"

namespace lava {

namespace {

// sentencepiece reads training sentences through this interface; ours come from memory.
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return next_ >= lines_.size(); }
  void Next() override { ++next_; }
  const std::string& value() const override { return lines_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  size_t next_ = 0;
};

// "▁" (U+2581), sentencepiece's mark of a piece that starts a word.
constexpr std::string_view kWordStart = "\xE2\x96\x81";

}  // namespace

SubwordModel::SubwordModel() : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SubwordModel::SubwordModel(SubwordModel&&) noexcept = default;
SubwordModel& SubwordModel::operator=(SubwordModel&&) noexcept = default;
SubwordModel::~SubwordModel() = default;

SubwordModel SubwordModel::learn(const std::vector<std::string>& lines, int types) {
  if (types < 8) throw UsageError(fmt::format("subword types: {} is too few (at least 8)", types));
  LineIterator it(lines);
  std::string bytes;
  // identity normalisation: the text is already LAVA-tokenised and lower-cased, and any rewrite here would break
  // "pieces concatenate to the word". No <s>/</s> pieces: the models add their own. hard_vocab_limit off: a small
  // corpus may hold fewer types than asked for, which is no error. One thread keeps the learner's order fixed.
  const sentencepiece::util::Status st = sentencepiece::SentencePieceTrainer::Train(
      {{"model_type", "bpe"},
       {"vocab_size", std::to_string(types)},
       {"normalization_rule_name", "identity"},
       {"character_coverage", "1.0"},
       {"hard_vocab_limit", "false"},
       {"bos_id", "-1"},
       {"eos_id", "-1"},
       {"num_threads", "1"},
       {"max_sentence_length", "1000000"},
       {"minloglevel", "2"}},
      &it, &bytes);
  if (!st.ok()) throw InputError(fmt::format("subword learner: {}", st.ToString()));
  return from_bytes(std::move(bytes), "the learned subword model");
}

SubwordModel SubwordModel::from_bytes(std::string bytes, const std::string& origin) {
  SubwordModel m;
  const sentencepiece::util::Status st = m.processor_->LoadFromSerializedProto(bytes);
  if (!st.ok()) throw input_error(origin, 0, fmt::format("not a subword model ({})", st.ToString()));
  m.bytes_ = std::move(bytes);
  return m;
}

int SubwordModel::types() const { return processor_->GetPieceSize(); }

std::vector<std::string> SubwordModel::split_word(std::string_view word) const {
  if (word.empty()) return {};
  const auto cached = word_cache_.find(std::string(word));
  if (cached != word_cache_.end()) return cached->second;
  std::vector<std::string> raw;
  const sentencepiece::util::Status st = processor_->Encode(word, &raw);
  LAVA_CHECK(st.ok(), "subword encode: {}", st.ToString());
  // The first piece carries the word-start mark (alone, as "▁", when the word's first character is unknown).
  std::vector<std::string> pieces;
  for (std::string& p : raw) {
    if (pieces.empty() && p.starts_with(kWordStart)) p.erase(0, kWordStart.size());
    if (!p.empty()) pieces.push_back(std::move(p));
  }
  // A word holding sentencepiece's own marks could come back altered; it stays one piece rather than change.
  std::string joined;
  for (const std::string& p : pieces) joined += p;
  if (joined != word) pieces = {std::string(word)};
  word_cache_.emplace(std::string(word), pieces);
  return pieces;
}

std::string SubwordModel::segment_line(std::string_view line) const {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    const size_t start = line.find_first_not_of(' ', i);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(line.find(' ', start), line.size());
    const std::vector<std::string> pieces = split_word(line.substr(start, end - start));
    for (size_t k = 0; k < pieces.size(); ++k) {
      if (!out.empty()) out += ' ';
      out += pieces[k];
      if (k + 1 < pieces.size()) out += "@@";
    }
    i = end;
  }
  return out;
}

}  // namespace lava
