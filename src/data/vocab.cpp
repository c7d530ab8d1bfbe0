#include "data/vocab.hpp"

#include <algorithm>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"
#include "data/tokenize.hpp"

namespace lava {

std::vector<std::string_view> split_tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0, n = line.size();
  while (i < n) {
    while (i < n && is_token_separator(line[i])) ++i;
    size_t start = i;
    while (i < n && !is_token_separator(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

namespace {

// Calls f(token) for each white-space separated token of `line`, without allocating.
template <class F>
void for_each_token(std::string_view line, F&& f) {
  size_t i = 0, n = line.size();
  while (i < n) {
    while (i < n && is_token_separator(line[i])) ++i;
    size_t start = i;
    while (i < n && !is_token_separator(line[i])) ++i;
    if (i > start) f(line.substr(start, i - start));
  }
}

bool is_special(std::string_view token) {
  for (auto s : Vocab::kSpecialTokens)
    if (token == s) return true;
  return false;
}

}  // namespace

// ---- TokenCounter ----

void TokenCounter::add(std::string_view token, int64_t n) {
  auto it = counts_.find(token);
  if (it == counts_.end()) it = counts_.emplace(std::string(token), 0).first;
  it->second += n;
  total_ += n;
}

void TokenCounter::add_line(std::string_view line) {
  for_each_token(line, [&](std::string_view t) { add(t); });
}

int64_t TokenCounter::count(std::string_view token) const {
  auto it = counts_.find(token);
  return it == counts_.end() ? 0 : it->second;
}

// ---- Vocab ----

Vocab::Vocab() {
  for (auto s : kSpecialTokens) push(std::string(s));
}

void Vocab::push(std::string token) {
  ids_.emplace(token, int(tokens_.size()));
  tokens_.push_back(std::move(token));
}

Vocab Vocab::build(const TokenCounter& counts, const VocabOptions& options) {
  if (options.min_freq < 1) throw UsageError(fmt::format("vocabulary min_freq must be at least 1, got {}", options.min_freq));
  if (options.max_vocab < 0) throw UsageError(fmt::format("vocabulary max_vocab must be >= 0, got {}", options.max_vocab));
  std::vector<std::pair<int64_t, const std::string*>> kept;
  std::pair<int64_t, const std::string*> most{0, nullptr};
  for (const auto& [token, n] : counts.counts_) {
    if (is_special(token)) continue;
    if (n >= options.min_freq) kept.emplace_back(n, &token);
    if (n > most.first || (n == most.first && most.second && token < *most.second)) most = {n, &token};
  }
  // A model over the control symbols alone would train on <unk> for every word without a word of warning.
  if (kept.empty() && most.second)
    throw UsageError(fmt::format("--min-freq {} leaves only the special tokens in the vocabulary (the most frequent "
                                 "word, {}, appears {} times)",
                                 options.min_freq, quote_input(*most.second, '"'), most.first));
  // Total order (count desc, bytes asc): the hash map's iteration order cannot leak into the ids.
  auto before = [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : *a.second < *b.second; };
  size_t keep = options.max_vocab > 0 ? std::min(kept.size(), size_t(options.max_vocab)) : kept.size();
  std::partial_sort(kept.begin(), kept.begin() + keep, kept.end(), before);
  Vocab v;
  v.tokens_.reserve(kNumSpecial + keep);
  for (size_t k = 0; k < keep; ++k) v.push(*kept[k].second);
  return v;
}

int Vocab::id(std::string_view token) const {
  auto it = ids_.find(token);
  if (it == ids_.end() || it->second == kPad || it->second == kBos || it->second == kEos) return kUnk;
  return it->second;
}

const std::string& Vocab::token(int id) const {
  LAVA_CHECK(id >= 0 && id < size(), "token id {} outside the vocabulary of {} tokens", id, size());
  return tokens_[size_t(id)];
}

int64_t Vocab::encode(std::string_view line, std::vector<int32_t>& out) const {
  int64_t unknown = 0;
  for_each_token(line, [&](std::string_view t) {
    int k = id(t);
    unknown += (k == kUnk);
    out.push_back(int32_t(k));
  });
  return unknown;
}

std::string Vocab::to_text() const {
  std::string out;
  size_t bytes = 0;
  for (const auto& t : tokens_) bytes += t.size() + 1;
  out.reserve(bytes);
  for (const auto& t : tokens_) {
    out += t;
    out += '\n';
  }
  return out;
}

Vocab Vocab::from_text(std::string_view text, const std::string& source) {
  auto fail = [&](size_t line, const std::string& what) {
    return input_error(source, 0, fmt::format("vocabulary line {}: {}", line, what));
  };
  Vocab v;
  v.tokens_.clear();
  v.ids_.clear();
  size_t pos = 0, line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view token = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!token.empty() && token.back() == '\r') token.remove_suffix(1);  // CRLF-edited file
    if (line <= size_t(kNumSpecial)) {
      std::string_view want = kSpecialTokens[line - 1];
      if (token != want)
        throw fail(line, fmt::format("expected \"{}\" (the vocabulary starts with <pad> <unk> <bos> <eos>, one per line)",
                                     want));
    }
    if (token.empty()) throw fail(line, "empty token");
    if (std::any_of(token.begin(), token.end(), is_token_separator))
      throw fail(line, "token contains white space");
    if (!is_valid_utf8(token)) throw fail(line, "invalid UTF-8");
    if (auto it = v.ids_.find(token); it != v.ids_.end())
      throw fail(line, fmt::format("duplicate token {} (also on line {})", quote_input(token, '"'), it->second + 1));
    v.push(std::string(token));
  }
  if (v.size() < kNumSpecial)
    throw input_error(source, 0,
                      fmt::format("vocabulary has {} lines; it needs at least the 4 control symbols <pad> <unk> <bos> "
                                  "<eos>",
                                  line));
  return v;
}

void Vocab::save(const std::string& path) const { write_file_atomic(path, to_text()); }

Vocab Vocab::load(const std::string& path) { return from_text(read_file(path, kTextDataLimit), path); }

}  // namespace lava
