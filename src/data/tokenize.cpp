#include "data/tokenize.hpp"

#include "core/utf8.hpp"

#include <algorithm>
#include <cstdint>

namespace lava {

bool is_word_char(char32_t cp) {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  if (cp < 0xC0) return cp == 0xAA || cp == 0xB5 || cp == 0xBA;  // ª µ º; the rest of Latin-1 is punctuation/symbols
  if (cp == 0xD7 || cp == 0xF7) return false;                    // × ÷
  if (cp >= 0x2000 && cp <= 0x2BFF) return false;                // punctuation, symbols, arrows, math, box drawing
  if (cp >= 0x2E00 && cp <= 0x2E7F) return false;                // supplemental punctuation
  if (cp >= 0x3000 && cp <= 0x303F) return false;                // CJK punctuation
  if ((cp >= 0xFE10 && cp <= 0xFE1F) || (cp >= 0xFE30 && cp <= 0xFE6F)) return false;
  if ((cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
      (cp >= 0xFF5B && cp <= 0xFF65))
    return false;                                    // full-width punctuation
  if (cp >= 0xFFF0 && cp <= 0xFFFF) return false;    // specials, U+FFFD
  if (cp >= 0x1F000 && cp <= 0x1FAFF) return false;  // emoji and pictographs
  return true;
}

bool is_letter(char32_t cp) { return is_word_char(cp) && cp != '_' && !(cp >= '0' && cp <= '9'); }

bool is_space(char32_t cp) {
  return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

char32_t to_lower(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp < 0xC0) return cp;
  if (cp <= 0xDE) return cp == 0xD7 ? cp : cp + 0x20;  // À..Þ except ×
  if (cp >= 0x100 && cp <= 0x17F) {
    // Latin Extended-A alternates capital/small, with the phase flipping at U+0139 and back at U+014A.
    if (cp == 0x178) return 0xFF;  // Ÿ
    bool even_is_capital = (cp < 0x138) || (cp >= 0x14A && cp < 0x178);
    bool capital = even_is_capital ? (cp % 2 == 0) : (cp % 2 == 1);
    if (cp == 0x130 || cp == 0x131 || cp == 0x138 || cp == 0x149 || cp == 0x17F) return cp;  // İ ı ĸ ŉ ſ
    return capital ? cp + 1 : cp;
  }
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 0x20;  // Greek
  if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20;                 // Cyrillic А..Я
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;                 // Cyrillic Ѐ..Џ
  if (cp == 0x1E9E) return 0xDF;                                    // ẞ -> ß
  return cp;
}

bool is_upper(char32_t cp) { return to_lower(cp) != cp; }

std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) append_utf8(out, to_lower(next_codepoint(text, pos)));
  return out;
}

namespace {

bool is_digit(char32_t cp) { return cp >= '0' && cp <= '9'; }

// Invisible characters that separate nothing: controls, soft hyphen, zero-width space/joiners, BOM.
bool is_invisible(char32_t cp) {
  return cp < 0x20 || cp == 0x7F || cp == 0xAD || (cp >= 0x200B && cp <= 0x200D) || cp == 0x2060 || cp == 0xFEFF;
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<char32_t> cps;
  cps.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) cps.push_back(next_codepoint(text, pos));
  const size_t n = cps.size();
  auto word_at = [&](size_t k) { return k < n && is_word_char(cps[k]); };
  auto space_or_end = [&](size_t k) { return k >= n || is_space(cps[k]); };

  std::vector<std::string> tokens;
  auto emit = [&](size_t begin, size_t end) {
    std::string token;
    for (size_t k = begin; k < end; ++k) append_utf8(token, to_lower(cps[k]));
    tokens.push_back(std::move(token));
  };

  size_t i = 0;
  while (i < n) {
    const char32_t c = cps[i];
    if (is_space(c) || is_invisible(c)) {
      ++i;
      continue;
    }
    const size_t start = i;
    // An option starts a word: "-l", "--all", "--block-size" (not "a-b", which is a compound, nor "x--y").
    const bool at_word_start = (i == 0 || (!is_word_char(cps[i - 1]) && cps[i - 1] != '-'));
    if (c == '-' && at_word_start) {
      size_t k = i + 1;
      if (k < n && cps[k] == '-') ++k;
      if (word_at(k)) {
        i = k;
        while (word_at(i) || (i < n && cps[i] == '-' && word_at(i + 1))) ++i;
        emit(start, i);
        continue;
      }
    }
    if (is_word_char(c)) {
      while (true) {
        while (word_at(i)) ++i;
        if (i >= n) break;
        const char32_t d = cps[i];
        if (d == '-' && word_at(i + 1)) {  // hyphenated compound
          ++i;
          continue;
        }
        if ((d == '\'' || d == 0x2019) && is_letter(cps[i - 1]) && i + 1 < n && is_letter(cps[i + 1])) {
          ++i;  // apostrophe inside a word
          continue;
        }
        if ((d == ',' || d == '.') && is_digit(cps[i - 1]) && i + 1 < n && is_digit(cps[i + 1])) {
          ++i;  // number with an inner separator
          continue;
        }
        if (d == '-' && is_letter(cps[i - 1]) && (space_or_end(i + 1) || cps[i + 1] == ',')) ++i;  // "Datei- und"
        break;
      }
      emit(start, i);
      continue;
    }
    if (c == '.') {
      while (i < n && cps[i] == '.') ++i;
      emit(start, i);
      continue;
    }
    if (c != 0xFFFD) emit(i, i + 1);
    ++i;
  }
  return tokens;
}

std::string join_tokens(const std::vector<std::string>& tokens) {
  std::string out;
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (k) out += ' ';
    out += tokens[k];
  }
  return out;
}

bool keep_token_pair(const std::vector<std::string>& src, const std::vector<std::string>& tgt, int min_tokens,
                     int max_tokens) {
  const long ns = long(src.size()), nt = long(tgt.size());
  if (ns < min_tokens || nt < min_tokens || ns > max_tokens || nt > max_tokens) return false;
  const long longer = std::max(ns, nt), shorter = std::min(ns, nt);
  if (longer > 4 && longer > 2 * shorter) return false;
  if (src == tgt) return false;
  auto has_letter = [](const std::vector<std::string>& tokens) {
    for (const auto& t : tokens)
      for (size_t pos = 0; pos < t.size();)
        if (is_letter(next_codepoint(t, pos))) return true;
    return false;
  };
  return has_letter(src) && has_letter(tgt);
}

}  // namespace lava
