// The character-level cleaners of text_clean.hpp: menu accelerators, markup tags, HTML entities and format
// specifiers. Splitting into segments and sentences, and the whole pipeline, are in text_clean.cpp.
#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/utf8.hpp"
#include "data/ascii_chars.hpp"
#include "data/text_clean.hpp"

namespace lava {

namespace {

constexpr auto npos = std::string_view::npos;

bool ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
// A byte that starts a letter or digit: ASCII alnum or the lead byte of a multi-byte UTF-8 character.
bool starts_alnum(char c) { return ascii_alnum(c) || uint8_t(c) >= 0xC0; }

// Length of an HTML entity starting at s[i] == '&' ("&amp;" -> 5), or 0 if there is none.
size_t entity_length(std::string_view s, size_t i) {
  size_t k = i + 1;
  if (k < s.size() && s[k] == '#') {
    ++k;
    bool hex = k < s.size() && (s[k] == 'x' || s[k] == 'X');
    if (hex) ++k;
    size_t digits = k;
    while (k < s.size() && (hex ? std::isxdigit(uint8_t(s[k])) != 0 : ascii_digit(s[k]))) ++k;
    if (k == digits || k >= s.size() || s[k] != ';') return 0;
    return k + 1 - i;
  }
  size_t name = k;
  while (k < s.size() && ascii_alnum(s[k]) && k - name < 10) ++k;
  if (k == name || k >= s.size() || s[k] != ';') return 0;
  return k + 1 - i;
}

// Removes the single occurrence of `marker` at a position accepted by `is_mnemonic`; returns whether it did.
template <class Accept>
bool remove_single_marker(std::string& s, char marker, Accept is_mnemonic) {
  size_t count = 0, where = npos;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] != marker) continue;
    if (!is_mnemonic(s, k)) continue;
    ++count, where = k;
  }
  size_t total = 0;
  for (char c : s) total += (c == marker);
  if (count != 1 || total != 1) return false;
  s.erase(where, 1);
  return true;
}

}  // namespace

std::string strip_accelerators(std::string_view text) {
  std::string s(text);
  auto before_alnum = [](const std::string& t, size_t k) { return k + 1 < t.size() && starts_alnum(t[k + 1]); };
  // "_Datei", "Ö_ffnen"; not "LC_ALL" (upper case on both sides reads as an identifier).
  remove_single_marker(s, '_', [&](const std::string& t, size_t k) {
    return before_alnum(t, k) && !(k > 0 && ascii_upper(t[k - 1]) && ascii_upper(t[k + 1]));
  });
  remove_single_marker(s, '~', [&](const std::string& t, size_t k) {
    return k + 1 < t.size() && (ascii_alpha(t[k + 1]) || uint8_t(t[k + 1]) >= 0xC0);
  });
  // '&' is a mnemonic unless it is doubled (a literal "&") or starts an entity.
  size_t count = 0, where = npos;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] != '&') continue;
    if (k + 1 < s.size() && s[k + 1] == '&') {
      ++k;
      continue;
    }
    if (entity_length(s, k) > 0) continue;
    if (before_alnum(s, k)) ++count, where = k;
  }
  if (count == 1) {
    s.erase(where, 1);
    for (size_t k = s.find("&&"); k != npos; k = s.find("&&", k + 1)) s.erase(k, 1);
  }
  return s;
}

std::string drop_tags(std::string_view text) {
  static constexpr std::array<std::string_view, 18> kInline = {"a",    "b",   "i",   "u",    "s",      "em",
                                                               "tt",   "sub", "sup", "big",  "small",  "span",
                                                               "font", "kbd", "var", "code", "strong", "nobr"};
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '<') {
      out += text[i++];
      continue;
    }
    size_t k = i + 1;
    if (k < text.size() && text[k] == '/') ++k;
    size_t name_begin = k;
    if (k < text.size() && text[k] >= 'a' && text[k] <= 'z') {
      while (k < text.size() && (ascii_alnum(text[k]) || text[k] == ':' || text[k] == '_' || text[k] == '-')) ++k;
      std::string_view name = text.substr(name_begin, k - name_begin);
      size_t close = npos;
      if (k < text.size() && text[k] == '>')
        close = k;
      else if (k + 1 < text.size() && text[k] == '/' && text[k + 1] == '>')
        close = k + 1;
      else if (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n')) {
        size_t end = text.find_first_of("<>", k);
        if (end != npos && text[end] == '>') close = end;
      }
      if (close != npos) {
        bool is_inline = false;
        for (auto t : kInline) is_inline |= (t == name);
        if (!is_inline) out += ' ';
        i = close + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

std::string html_unescape(std::string_view text) {
  struct Named {
    std::string_view name;
    char32_t cp;
  };
  static constexpr std::array<Named, 32> kNamed = {{
      {"amp", '&'},       {"lt", '<'},       {"gt", '>'},       {"quot", '"'},     {"apos", '\''},    {"nbsp", 0xA0},
      {"shy", 0xAD},      {"copy", 0xA9},    {"reg", 0xAE},     {"deg", 0xB0},     {"laquo", 0xAB},   {"raquo", 0xBB},
      {"times", 0xD7},    {"auml", 0xE4},    {"ouml", 0xF6},    {"uuml", 0xFC},    {"Auml", 0xC4},    {"Ouml", 0xD6},
      {"Uuml", 0xDC},     {"szlig", 0xDF},   {"eacute", 0xE9},  {"egrave", 0xE8},  {"ndash", 0x2013}, {"mdash", 0x2014},
      {"lsquo", 0x2018},  {"rsquo", 0x2019}, {"sbquo", 0x201A}, {"ldquo", 0x201C}, {"rdquo", 0x201D}, {"bdquo", 0x201E},
      {"hellip", 0x2026}, {"trade", 0x2122},
  }};
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len = text[i] == '&' ? entity_length(text, i) : 0;
    if (len == 0) {
      out += text[i++];
      continue;
    }
    std::string_view body = text.substr(i + 1, len - 2);
    char32_t cp = 0;
    if (body[0] == '#') {
      bool hex = body.size() > 1 && (body[1] == 'x' || body[1] == 'X');
      uint64_t value = 0;
      for (char c : body.substr(hex ? 2 : 1)) {
        int digit = ascii_digit(c) ? c - '0' : (std::tolower(uint8_t(c)) - 'a' + 10);
        value = value * (hex ? 16 : 10) + uint64_t(digit);
        if (value > 0x10FFFF) break;
      }
      bool valid = value > 0 && value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF);
      cp = valid ? char32_t(value) : 0;
    } else {
      for (const auto& n : kNamed)
        if (n.name == body) cp = n.cp;
    }
    if (cp == 0) {
      out += text[i++];
      continue;
    }
    append_utf8(out, cp);
    i += len;
  }
  return out;
}

std::string strip_format_specifiers(std::string_view text) {
  auto in = [](char c, std::string_view set) { return c != '\0' && set.find(c) != npos; };
  std::string out;
  out.reserve(text.size());
  bool removed = false;
  const size_t n = text.size();
  auto at = [&](size_t k) { return k < n ? text[k] : '\0'; };
  auto skip_digits = [&](size_t k) {
    while (ascii_digit(at(k))) ++k;
    return k;
  };
  auto skip_width = [&](size_t k) { return at(k) == '*' ? k + 1 : skip_digits(k); };  // "*" or digits
  for (size_t i = 0; i < n;) {
    const char c = text[i];
    size_t end = i;  // one past the specifier, when one starts at i
    if (c == '%' && at(i + 1) == '%') {
      out += '%';
      i += 2;
      continue;
    }
    if (c == '%' && at(i + 1) == '(') {  // Python: %(name)s
      size_t k = i + 2;
      while (ascii_alnum(at(k)) || at(k) == '_') ++k;
      if (at(k) == ')' && k > i + 2) {
        ++k;
        while (in(at(k), "-+ #0")) ++k;
        while (ascii_digit(at(k))) ++k;
        if (at(k) == '.')
          for (++k; ascii_digit(at(k));) ++k;
        if (in(at(k), "diouxXeEfFgGcrsa")) end = k + 1;
      }
    } else if (c == '%') {  // printf: %[N$][flags][width][.precision][length]conversion; then Qt/KDE %1, %L1
      size_t k = skip_digits(i + 1);
      k = (k > i + 1 && at(k) == '$') ? k + 1 : i + 1;
      while (in(at(k), "-+#0'")) ++k;
      k = skip_width(k);
      if (at(k) == '.') k = skip_width(k + 1);
      bool doubled = (at(k) == 'h' && at(k + 1) == 'h') || (at(k) == 'l' && at(k + 1) == 'l');
      k += doubled ? 2 : in(at(k), "hlLqjzZtI") ? 1 : 0;
      // A conversion glued to lower-case letters is a word ("50%ige"), not a specifier.
      if (in(at(k), "diouxXeEfFgGaAcspnmCS") && !(at(k + 1) >= 'a' && at(k + 1) <= 'z'))
        end = k + 1;
      else if (ascii_digit(at(i + 1)) || (at(i + 1) == 'L' && ascii_digit(at(i + 2))))
        end = skip_digits(i + (at(i + 1) == 'L' ? 2 : 1));
    } else if (c == '{') {  // Python str.format: {0}, {name}, {}, {0:>8}, {x!r}
      size_t k = i + 1;
      while (ascii_alnum(at(k)) || at(k) == '_' || at(k) == '.') ++k;
      if (at(k) == '!' && in(at(k + 1), "rsa")) k += 2;
      if (at(k) == ':')
        while (k < n && at(k) != '}' && at(k) != '{') ++k;
      if (at(k) == '}') end = k + 1;
    } else if (c == '$') {  // $VAR$ and ${VAR}
      bool braced = at(i + 1) == '{';
      size_t k = i + (braced ? 2 : 1);
      if (ascii_alpha(at(k)) || at(k) == '_') {
        while (ascii_alnum(at(k)) || at(k) == '_') ++k;
        if (at(k) == (braced ? '}' : '$')) end = k + 1;
      }
    }
    if (end > i) {
      removed = true;
      i = end;
    } else {
      out += c;
      ++i;
    }
  }
  if (!removed) return out;
  // Quotes and brackets that only held a specifier: "'%s'" -> "''" -> "".
  static constexpr std::array<std::string_view, 19> kEmptyPairs = {
      "''",           "\"\"",         "``",           "`'",           "()",           "[]",           "<>",
      "{}",           "\u2018\u2019", "\u201C\u201D", "\u201E\u201C", "\u201E\u201D", "\u00BB\u00AB", "\u00AB\u00BB",
      "\u201A\u2018", "\u201A\u2019", "\u2039\u203A", "\u203A\u2039", "\u2019\u2019"};
  for (auto pair : kEmptyPairs)
    for (size_t k = out.find(pair); k != npos; k = out.find(pair, k)) out.erase(k, pair.size());
  return out;
}

}  // namespace lava
