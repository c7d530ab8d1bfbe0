#include "data/text_clean.hpp"

#include <array>

#include "data/ascii_chars.hpp"
#include "data/tokenize.hpp"

namespace lava {

namespace {

constexpr auto npos = std::string_view::npos;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::vector<std::string> split_segments(std::string_view text) {
  auto terminal_end = [](std::string_view s) {
    size_t end = s.find_last_not_of(" \t\r");
    if (end == npos) return false;
    // Step back over closing quotes and brackets, ASCII or UTF-8 (» ” “ ’ are 2-3 bytes ending in 0x80-0xBF).
    static constexpr std::array<std::string_view, 8> kClosers = {")",      "\"",     "'",      "]",
                                                                 "\u00BB", "\u201D", "\u201C", "\u2019"};
    std::string_view t = s.substr(0, end + 1);
    for (bool stepped = true; stepped && !t.empty();) {
      stepped = false;
      for (auto closer : kClosers)
        if (t.size() > closer.size() && t.ends_with(closer)) {
          t.remove_suffix(closer.size());
          stepped = true;
        }
    }
    return !t.empty() && (std::string_view(".:!?;").find(t.back()) != npos || t.ends_with("\u2026"));
  };
  std::vector<std::string> segments;
  std::string current;
  bool have_current = false;
  auto flush = [&] {
    if (have_current) segments.push_back(std::move(current));
    current.clear();
    have_current = false;
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == npos ? npos : nl - start);
    start = (nl == npos) ? text.size() + 1 : nl + 1;
    size_t first = 0;
    while (first < line.size() && is_blank(line[first])) ++first;
    if (first == line.size()) {  // blank line: paragraph break
      flush();
      continue;
    }
    if (!have_current) {
      current = std::string(line);
      have_current = true;
      continue;
    }
    const bool indented = first > 0;
    const bool item = line[first] == '-' || line[first] == '*' || line.substr(first).starts_with("\u2022");
    const bool join = indented ? !item : (!item && !terminal_end(current));
    if (join) {
      // An indented continuation keeps its indentation, so the option column gap survives for
      // strip_option_syntax; normalize_space collapses it later.
      if (!indented) current += ' ';
      current.append(line);
    } else {
      flush();
      current = std::string(line);
      have_current = true;
    }
  }
  flush();
  return segments;
}

namespace {

// Index just past the leading "-" or "--" of an option ("  -a, --all" -> 3), or 0 when the text starts otherwise.
size_t option_start(std::string_view segment) {
  size_t first = 0;
  while (first < segment.size() && is_blank(segment[first])) ++first;
  if (first >= segment.size() || segment[first] != '-') return 0;
  size_t k = first + 1;
  if (k < segment.size() && segment[k] == '-') ++k;
  return (k < segment.size() && ascii_alnum(segment[k])) ? k : 0;
}

bool starts_with_option(std::string_view segment) { return option_start(segment) > 0; }

size_t count_at_codes(std::string_view text) {
  size_t count = 0;
  for (size_t k = 0; k + 1 < text.size(); ++k)
    count += text[k] == '@' && ascii_alpha(text[k + 1]) && (k == 0 || !ascii_alnum(text[k - 1]));
  return count;
}

}  // namespace

std::string strip_option_syntax(std::string_view segment) {
  const size_t k = option_start(segment);
  if (k == 0) return std::string(segment);
  size_t gap = npos;
  for (size_t p = k; p < segment.size(); ++p)
    if (segment[p] == '\t' || (segment[p] == ' ' && p + 1 < segment.size() && segment[p + 1] == ' ')) {
      gap = p;
      break;
    }
  if (gap == npos) return std::string(segment);
  size_t rest = segment.find_first_not_of(" \t\r\n", gap);
  return rest == npos ? std::string() : std::string(segment.substr(rest));
}

std::string normalize_space(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp = next_codepoint(text, pos);
    if (is_space(cp)) {
      pending_space = !out.empty();
      continue;
    }
    if (cp < 0x20 || cp == 0x7F || cp == 0xAD || (cp >= 0x200B && cp <= 0x200D) || cp == 0x2060 || cp == 0xFEFF)
      continue;  // invisible
    if (pending_space) out += ' ';
    pending_space = false;
    append_utf8(out, cp);
  }
  return out;
}

std::vector<std::string> split_sentences(std::string_view text) {
  std::vector<char32_t> cps;
  std::vector<size_t> offset;  // byte offset of each code point, plus the end
  for (size_t pos = 0; pos < text.size();) {
    offset.push_back(pos);
    cps.push_back(next_codepoint(text, pos));
  }
  offset.push_back(text.size());
  const size_t n = cps.size();
  auto closer = [](char32_t c) {
    return c == ')' || c == '"' || c == '\'' || c == ']' || c == 0xBB || c == 0x201D || c == 0x201C || c == 0x2019;
  };
  auto opener = [](char32_t c) {
    return c == '"' || c == '(' || c == 0x201E || c == 0x201C || c == 0xAB || c == 0xBB || c == 0x2018;
  };
  std::vector<std::string> sentences;
  size_t begin = 0;
  for (size_t i = 0; i < n; ++i) {
    char32_t c = cps[i];
    if (c != '.' && c != '!' && c != '?' && c != 0x2026) continue;
    size_t k = i + 1;
    while (k < n && (cps[k] == '.' || closer(cps[k]))) ++k;
    if (k + 1 >= n || cps[k] != ' ') continue;
    char32_t next = cps[k + 1];
    if (!(is_upper(next) || (next >= '0' && next <= '9') || opener(next))) continue;
    sentences.emplace_back(text.substr(offset[begin], offset[k] - offset[begin]));
    begin = k + 1;
    i = k;
  }
  if (begin < n) sentences.emplace_back(text.substr(offset[begin]));
  return sentences;
}

std::vector<TextPair> clean_message(std::string_view src, std::string_view tgt) {
  auto prepare = [](std::string_view s) {
    return split_segments(strip_format_specifiers(html_unescape(drop_tags(strip_accelerators(s)))));
  };
  std::vector<TextPair> pairs;
  // "@b", "@f": e2fsck's abbreviations ("block", "filesystem"), which translators spell out. A word-initial "@"
  // code on one side only means the sides do not say the same words. (E-mail addresses have "@" mid-word.)
  if (count_at_codes(src) != count_at_codes(tgt)) return pairs;
  std::vector<std::string> src_segments = prepare(src), tgt_segments = prepare(tgt);
  if (src_segments.size() != tgt_segments.size()) return pairs;
  for (size_t k = 0; k < src_segments.size(); ++k) {
    std::string a = strip_option_syntax(src_segments[k]), b = strip_option_syntax(tgt_segments[k]);
    // Both sides are option lines but only one has a description ("--footer[=TEXT]" against
    // "--footer[=TEXT]   Fußzeile ausgeben"): the lines do not correspond.
    const bool a_stripped = a != src_segments[k], b_stripped = b != tgt_segments[k];
    if (a_stripped != b_stripped && starts_with_option(src_segments[k]) && starts_with_option(tgt_segments[k]))
      continue;
    a = normalize_space(a), b = normalize_space(b);
    if (a.empty() || b.empty()) continue;
    std::vector<std::string> sa = split_sentences(a), sb = split_sentences(b);
    if (sa.size() == sb.size() && sa.size() > 1) {
      for (size_t s = 0; s < sa.size(); ++s) pairs.push_back({sa[s], sb[s]});
    } else {
      pairs.push_back({std::move(a), std::move(b)});
    }
  }
  return pairs;
}

}  // namespace lava
