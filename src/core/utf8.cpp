#include "core/utf8.hpp"

namespace lava {

char32_t next_codepoint(std::string_view text, size_t& pos) {
  constexpr char32_t kReplacement = 0xFFFD;
  auto byte = [&](size_t k) { return uint8_t(text[k]); };
  uint8_t b0 = byte(pos);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  // Sequence length and the smallest code point it may encode (longer encodings of smaller ones are overlong).
  int extra;
  char32_t cp, min_cp;
  if ((b0 & 0xE0) == 0xC0) {
    extra = 1, cp = b0 & 0x1F, min_cp = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    extra = 2, cp = b0 & 0x0F, min_cp = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    extra = 3, cp = b0 & 0x07, min_cp = 0x10000;
  } else {
    ++pos;
    return kReplacement;
  }
  if (pos + extra >= text.size()) {  // truncated at the end
    ++pos;
    return kReplacement;
  }
  for (int k = 1; k <= extra; ++k) {
    uint8_t b = byte(pos + k);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return kReplacement;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++pos;
    return kReplacement;
  }
  pos += extra + 1;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

size_t first_invalid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t before = pos;
    char32_t cp = next_codepoint(text, pos);
    // A genuine U+FFFD is three bytes long; the replacement for a bad byte advances by one.
    if (cp == 0xFFFD && pos - before == 1) return before;
  }
  return std::string_view::npos;
}

bool is_valid_utf8(std::string_view text) { return first_invalid_utf8(text) == std::string_view::npos; }

size_t utf8_sequence_length(const unsigned char* p, size_t avail) {
  size_t pos = 0;
  const char32_t cp = next_codepoint(std::string_view(reinterpret_cast<const char*>(p), avail), pos);
  return cp == 0xFFFD && pos == 1 ? 0 : pos;  // a genuine U+FFFD is three bytes long
}

}  // namespace lava
