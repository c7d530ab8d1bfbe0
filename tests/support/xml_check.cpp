#include "support/xml_check.hpp"

#include <cctype>
#include <string>
#include <vector>

#include "data/tokenize.hpp"

namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '_' || c == '-' || c == '.';
}

// Length of the entity at s[i] == '&' if it is one XML knows (&amp; &lt; &gt; &quot; &apos; &#N; &#xH;), else 0.
size_t entity_length(const std::string& s, size_t i) {
  for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
    if (s.compare(i, std::char_traits<char>::length(e), e) == 0) return std::char_traits<char>::length(e);
  if (s.compare(i, 2, "&#") == 0) {
    size_t j = i + 2;
    bool hex = j < s.size() && s[j] == 'x';
    if (hex) ++j;
    size_t digits = 0;
    while (j < s.size() &&
           (hex ? std::isxdigit(static_cast<unsigned char>(s[j])) : std::isdigit(static_cast<unsigned char>(s[j]))))
      ++j, ++digits;
    if (digits > 0 && j < s.size() && s[j] == ';') return j + 1 - i;
  }
  return 0;
}

}  // namespace

std::string xml_problem(const std::string& doc) {
  if (!lava::is_valid_utf8(doc)) return "invalid UTF-8";
  std::vector<std::string> stack;
  int roots = 0;
  size_t i = 0;
  auto at = [&](const std::string& what) { return what + " at byte " + std::to_string(i); };
  if (doc.compare(0, 5, "<?xml") == 0) {
    i = doc.find("?>");
    if (i == std::string::npos) return "unterminated declaration";
    i += 2;
  }
  while (i < doc.size()) {
    const char c = doc[i];
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') return at("control character");
    if (c == '&') {
      size_t n = entity_length(doc, i);
      if (n == 0) return at("bare &");
      i += n;
    } else if (c == '>') {
      return at("unescaped > in text");
    } else if (c != '<') {
      if (stack.empty() && c != '\n' && c != ' ') return at("text outside the root");
      ++i;
    } else if (doc.compare(i, 4, "<!--") == 0) {
      i = doc.find("-->", i);
      if (i == std::string::npos) return "unterminated comment";
      i += 3;
    } else if (doc.compare(i, 2, "</") == 0) {
      size_t j = i + 2;
      while (j < doc.size() && name_char(doc[j])) ++j;
      std::string name = doc.substr(i + 2, j - i - 2);
      if (j >= doc.size() || doc[j] != '>') return at("bad end tag");
      if (stack.empty() || stack.back() != name) return at("end tag </" + name + "> does not match");
      stack.pop_back();
      i = j + 1;
    } else {  // start tag: name, attributes name="value", then > or />
      size_t j = i + 1;
      while (j < doc.size() && name_char(doc[j])) ++j;
      std::string name = doc.substr(i + 1, j - i - 1);
      if (name.empty()) return at("unnamed tag");
      if (stack.empty() && ++roots > 1) return at("second root element");
      if (stack.empty() && name != "svg") return at("root is not <svg>");
      while (true) {
        while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
        if (j >= doc.size()) return at("unterminated tag <" + name);
        if (doc.compare(j, 2, "/>") == 0) {
          j += 2;
          break;
        }
        if (doc[j] == '>') {
          stack.push_back(name);
          ++j;
          break;
        }
        size_t k = j;
        while (k < doc.size() && name_char(doc[k])) ++k;
        if (k == j || k + 1 >= doc.size() || doc[k] != '=' || (doc[k + 1] != '"' && doc[k + 1] != '\''))
          return at("bad attribute in <" + name);
        const char quote = doc[k + 1];
        size_t v = k + 2;
        while (v < doc.size() && doc[v] != quote) {
          if (doc[v] == '<') return at("< inside an attribute of <" + name);
          if (doc[v] == '&') {
            size_t n = entity_length(doc, v);
            if (n == 0) return at("bare & inside an attribute of <" + name);
            v += n;
          } else {
            ++v;
          }
        }
        if (v >= doc.size()) return at("unterminated attribute in <" + name);
        j = v + 1;
      }
      i = j;
    }
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (roots != 1) return "no root element";
  return "";
}
