#pragma once
// Lists written as one string of space-separated words, such as the options a variant or a cross-check dump reads
// ("samples warm-start"): declared next to the code that reads them, compared by word.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace lava {

// The space-separated words of `list` (runs of spaces count as one separator).
inline std::vector<std::string> words_of(std::string_view list) {
  std::vector<std::string> words;
  for (size_t at = 0; at < list.size();) {
    const size_t end = std::min(list.find(' ', at), list.size());
    if (end > at) words.emplace_back(list.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

// Whether `word` is one of the words of `list`.
inline bool has_word(std::string_view list, std::string_view word) {
  for (const std::string& w : words_of(list))
    if (w == word) return true;
  return false;
}

}  // namespace lava
