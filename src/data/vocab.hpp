#pragma once
// Word vocabulary of one side of a translation corpus: token string <-> integer id.
//
// Ids 0..3 are the control symbols <pad> <unk> <bos> <eos>; ids 4.. are corpus tokens, most frequent first, ties
// broken by the token's bytes (std::string order), so the same training text always gives the same ids.
// Text never produces the control ids 0, 2, 3: a corpus token spelled "<pad>", "<bos>" or "<eos>" maps to <unk>
// (it would otherwise be masked out or end a sentence), and "<unk>" maps to <unk>. Code asks for the control ids by
// name (Vocab::kPad, ...).
//
// Serialised form (to_text / from_text), meant for a model file's string metadata and for plain vocab files:
// one token per line, line k+1 holding id k, each line ending in '\n'; the first four lines are the control symbols.
// Tokens never hold ASCII white space, because the corpus reader splits on it.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lava {

struct VocabOptions {
  int64_t min_freq = 1;  // a token needs at least this many occurrences in the training text
  int max_vocab = 0;     // keep at most this many corpus tokens (the 4 control symbols come on top); 0 = no cap
};

// Hash for unordered maps keyed by std::string that are searched with std::string_view (no temporary string).
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Occurrence counts of the tokens of a training text.
class TokenCounter {
 public:
  void add(std::string_view token, int64_t n = 1);
  void add_line(std::string_view line);  // tokens separated by ASCII white space
  int64_t count(std::string_view token) const;
  size_t distinct() const { return counts_.size(); }
  int64_t total() const { return total_; }

 private:
  friend class Vocab;
  std::unordered_map<std::string, int64_t, StringViewHash, std::equal_to<>> counts_;
  int64_t total_ = 0;
};

class Vocab {
 public:
  static constexpr int kPad = 0, kUnk = 1, kBos = 2, kEos = 3, kNumSpecial = 4;
  static constexpr std::string_view kSpecialTokens[kNumSpecial] = {"<pad>", "<unk>", "<bos>", "<eos>"};

  Vocab();  // the 4 control symbols only

  // Tokens with count >= min_freq, sorted by (count descending, bytes ascending), the first max_vocab of them.
  // Counts of tokens spelled like a control symbol are ignored.
  static Vocab build(const TokenCounter& counts, const VocabOptions& options);

  int id(std::string_view token) const;  // kUnk for tokens not in the vocabulary and for "<pad>" "<bos>" "<eos>"
  const std::string& token(int id) const;  // id must be in [0, size())
  int size() const { return int(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }

  // Appends the ids of a line's tokens (split on ASCII white space) to `out`; returns how many were <unk>.
  int64_t encode(std::string_view line, std::vector<int32_t>& out) const;

  std::string to_text() const;
  // Validates: the control symbols on lines 1-4 in order, no empty token, no white space inside a token, valid UTF-8,
  // no duplicate. Any problem is one InputError "SOURCE: vocabulary line K: what", SOURCE being the caller's name
  // for where the text came from (e.g. "model.safetensors" or a vocab file path).
  static Vocab from_text(std::string_view text, const std::string& source);

  // Plain files in the same format (written atomically).
  void save(const std::string& path) const;
  static Vocab load(const std::string& path);

  bool operator==(const Vocab& other) const { return tokens_ == other.tokens_; }

 private:
  void push(std::string token);
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int, StringViewHash, std::equal_to<>> ids_;
};

// The tokens of a line, split on ASCII white space (space, tab, CR, VT, FF; '\n' never occurs inside a line).
// The views point into `line`.
std::vector<std::string_view> split_tokens(std::string_view line);
inline bool is_token_separator(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace lava
