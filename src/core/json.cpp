#include "core/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/utf8.hpp"

namespace lava {

namespace {

constexpr int kMaxDepth = 200;
constexpr double kMaxExactInt = 9007199254740992.0;  // 2^53: every integer up to here is exact in a double

// 'x' for printable ASCII, byte 0xNN otherwise: error messages must stay one readable line.
std::string describe_char(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7F) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02X}", u);
}

}  // namespace

// ---------------------------------------------------------------- parser

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& file)
      : text_(text), file_(std::make_shared<const std::string>(file)) {}

  JsonValue parse_document() {
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
    skip_ws();
    if (at_end()) fail("empty input, expected a JSON value");
    JsonValue v = parse_value(0);
    skip_ws();
    if (!at_end()) fail(fmt::format("unexpected {} after the JSON value", describe_char(peek())));
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what, long line = 0) const {
    throw input_error(*file_, line > 0 ? line : line_, what);
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  void skip_ws() {
    for (; !at_end(); ++pos_) {
      char c = peek();
      if (c == '\n') ++line_;
      else if (c != ' ' && c != '\t' && c != '\r') break;
    }
  }
  void expect_literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) fail(fmt::format("unexpected {}", describe_char(peek())));
    pos_ += word.size();
  }

  JsonValue parse_value(int depth) {
    if (at_end()) fail("unexpected end of input, expected a value");
    // depth = containers already open around this value; a new one would be level depth + 1.
    if ((peek() == '{' || peek() == '[') && depth >= kMaxDepth)
      fail(fmt::format("nesting deeper than {} levels", kMaxDepth));
    JsonValue v;
    v.file_ = file_;
    v.line_ = line_;
    char c = peek();
    if (c == '{') {
      parse_object(v, depth);
    } else if (c == '[') {
      parse_array(v, depth);
    } else if (c == '"') {
      v.kind_ = JsonValue::Kind::string;
      v.str_ = parse_string();
    } else if (c == 't' || c == 'f') {
      expect_literal(c == 't' ? "true" : "false");
      v.kind_ = JsonValue::Kind::boolean;
      v.bool_ = (c == 't');
    } else if (c == 'n') {
      expect_literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind_ = JsonValue::Kind::number;
      const size_t begin = pos_;
      v.num_ = parse_number();
      // An integer literal keeps its exact value as well: a double rounds those past 2^53.
      const std::string_view literal = text_.substr(begin, pos_ - begin);
      if (literal.find_first_of(".eE") == std::string_view::npos) {
        const auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), v.int_);
        v.exact_int_ = ec == std::errc() && end == literal.data() + literal.size();
      }
    } else if (text_.substr(pos_).starts_with("NaN") || text_.substr(pos_).starts_with("Infinity")) {
      fail("NaN and Infinity are not valid JSON (write null)");
    } else {
      fail(fmt::format("unexpected {}, expected a value", describe_char(c)));
    }
    return v;
  }

  void parse_object(JsonValue& v, int depth) {
    v.kind_ = JsonValue::Kind::object;
    ++pos_;  // '{'
    skip_ws();
    if (!at_end() && peek() == '}') return void(++pos_);
    for (;;) {
      skip_ws();
      if (at_end() || peek() != '"')
        fail(at_end() ? "unexpected end of input inside an object" : fmt::format("expected a \"key\", got {}", describe_char(peek())));
      std::string key = parse_string();
      skip_ws();
      if (at_end() || peek() != ':') fail(fmt::format("expected ':' after key {}", quote_input(key, '"')));
      ++pos_;
      skip_ws();
      JsonValue child = parse_value(depth + 1);
      child.key_ = key;
      child.index_ = -2;
      v.obj_.emplace_back(std::move(key), std::move(child));
      skip_ws();
      if (at_end()) fail("unexpected end of input inside an object (missing '}')");
      if (peek() == ',') { ++pos_; continue; }
      if (peek() == '}') { ++pos_; break; }
      fail(fmt::format("expected ',' or '}}' in an object, got {}", describe_char(peek())));
    }
    // Duplicate keys: sort member indices by key (O(n log n) even for hostile files), compare neighbours.
    std::vector<size_t> order(v.obj_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return v.obj_[a].first != v.obj_[b].first ? v.obj_[a].first < v.obj_[b].first : a < b;
    });
    for (size_t i = 1; i < order.size(); ++i)
      if (v.obj_[order[i]].first == v.obj_[order[i - 1]].first)
        fail(fmt::format("duplicate key {}", quote_input(v.obj_[order[i]].first, '"')), v.obj_[order[i]].second.line_);
  }

  void parse_array(JsonValue& v, int depth) {
    v.kind_ = JsonValue::Kind::array;
    ++pos_;  // '['
    skip_ws();
    if (!at_end() && peek() == ']') return void(++pos_);
    for (;;) {
      skip_ws();
      JsonValue child = parse_value(depth + 1);
      child.index_ = static_cast<long>(v.arr_.size());
      v.arr_.push_back(std::move(child));
      skip_ws();
      if (at_end()) fail("unexpected end of input inside an array (missing ']')");
      if (peek() == ',') { ++pos_; continue; }
      if (peek() == ']') { ++pos_; break; }
      fail(fmt::format("expected ',' or ']' in an array, got {}", describe_char(peek())));
    }
  }

  // number = -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  double parse_number() {
    const size_t begin = pos_;
    auto digits = [&] {
      size_t n = 0;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_, ++n;
      return n;
    };
    if (peek() == '-') {
      ++pos_;
      if (text_.substr(pos_).starts_with("Infinity")) fail("NaN and Infinity are not valid JSON (write null)");
    }
    if (at_end() || !(peek() >= '0' && peek() <= '9')) fail("expected a digit in number");
    if (peek() == '0') {
      ++pos_;
      if (!at_end() && peek() >= '0' && peek() <= '9') fail("leading zeros are not allowed in numbers");
    } else {
      digits();
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      if (digits() == 0) fail("expected a digit after '.' in number");
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (digits() == 0) fail("expected a digit in the exponent of number");
    }
    double x = 0.0;
    auto [end, ec] = std::from_chars(text_.data() + begin, text_.data() + pos_, x);
    if (ec != std::errc() || end != text_.data() + pos_)
      fail(fmt::format("number {} is out of the range of a double", quote_input(text_.substr(begin, pos_ - begin))));
    return x;
  }

  uint32_t parse_hex4() {
    if (text_.size() - pos_ < 4) fail("truncated \\u escape");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
      if (d < 0) fail(fmt::format("bad hex digit {} in \\u escape", describe_char(c)));
      cp = cp * 16 + uint32_t(d);
    }
    return cp;
  }

  std::string parse_string() {
    const long start_line = line_;
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string", start_line);
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') { ++pos_; return out; }
      if (c == '\n') fail("unterminated string (raw newline inside a string)", start_line);
      if (c < 0x20) fail(fmt::format("raw control character 0x{:02X} inside a string must be escaped", c));
      if (c == '\\') {
        ++pos_;
        if (at_end()) fail("unterminated string", start_line);
        char e = text_[pos_++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            uint32_t cp = parse_hex4();
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {  // UTF-16 pair: \uD83D\uDE00
              if (text_.substr(pos_, 2) != "\\u") fail("high surrogate in \\u escape not followed by a low one");
              pos_ += 2;
              uint32_t lo = parse_hex4();
              if (lo < 0xDC00 || lo > 0xDFFF) fail("high surrogate in \\u escape not followed by a low one");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            append_utf8(out, char32_t(cp));
            break;
          }
          default: fail(fmt::format("bad escape \\{} in string", e));
        }
        continue;
      }
      size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(text_.data() + pos_), text_.size() - pos_);
      if (n == 0) fail(fmt::format("invalid UTF-8 ({}) in string", describe_char(char(c))));
      out.append(text_.substr(pos_, n));
      pos_ += n;
    }
  }

  std::string_view text_;
  std::shared_ptr<const std::string> file_;
  size_t pos_ = 0;
  long line_ = 1;
};

JsonValue parse_json(std::string_view text, const std::string& file_name) {
  return JsonParser(text, file_name).parse_document();
}

// ---------------------------------------------------------------- accessors

const std::string& JsonValue::file() const {
  static const std::string unnamed = "(json)";
  return file_ ? *file_ : unnamed;
}

std::string JsonValue::what_it_is() const {
  if (index_ == -2) return fmt::format("key {}", quote_input(key_, '"'));
  if (index_ >= 0) return fmt::format("element {}", index_);
  return "value";
}

const char* JsonValue::kind_name() const {
  switch (kind_) {
    case Kind::null: return "null";
    case Kind::boolean: return "a boolean";
    case Kind::number: return "a number";
    case Kind::string: return "a string";
    case Kind::array: return "an array";
    case Kind::object: return "an object";
  }
  return "?";
}

void JsonValue::type_error(const char* expected) const {
  throw input_error(file(), line_, fmt::format("{}: expected {}, got {}", what_it_is(), expected, kind_name()));
}

bool JsonValue::boolean() const {
  if (kind_ != Kind::boolean) type_error("a boolean");
  return bool_;
}
double JsonValue::number() const {
  if (kind_ != Kind::number) type_error("a number");
  return num_;
}
int64_t JsonValue::as_int() const {
  if (kind_ != Kind::number) type_error("an integer");
  if (exact_int_) return int_;
  if (!(std::trunc(num_) == num_ && std::fabs(num_) <= kMaxExactInt))
    throw input_error(file(), line_, fmt::format("{}: expected an integer, got {}", what_it_is(), num_));
  return static_cast<int64_t>(num_);
}
const std::string& JsonValue::str() const {
  if (kind_ != Kind::string) type_error("a string");
  return str_;
}
const JsonValue::Array& JsonValue::items() const {
  if (kind_ != Kind::array) type_error("an array");
  return arr_;
}
const JsonValue::Object& JsonValue::members() const {
  if (kind_ != Kind::object) type_error("an object");
  return obj_;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, v] : members())
    if (k == key) return &v;
  return nullptr;
}

const JsonValue& JsonValue::at(std::string_view key) const {
  if (const JsonValue* v = find(key)) return *v;
  std::string where = index_ == -1 ? "" : fmt::format(" (in {})", what_it_is());
  throw input_error(file(), line_, fmt::format("missing key \"{}\"{}", key, where));
}

const JsonValue& JsonValue::operator[](size_t i) const {
  const Array& a = items();
  if (i >= a.size())
    throw input_error(file(), line_, fmt::format("{}: needs more than {} elements", what_it_is(), a.size()));
  return a[i];
}

size_t JsonValue::size() const {
  if (kind_ == Kind::array) return arr_.size();
  if (kind_ == Kind::object) return obj_.size();
  type_error("an array or an object");
}

JsonValue& JsonValue::push_back(JsonValue v) {
  LAVA_CHECK(kind_ == Kind::array, "push_back on a JSON {}", kind_name());
  v.index_ = static_cast<long>(arr_.size());
  arr_.push_back(std::move(v));
  return arr_.back();
}

JsonValue& JsonValue::set(std::string key, JsonValue v) {
  LAVA_CHECK(kind_ == Kind::object, "set on a JSON {}", kind_name());
  v.key_ = key;
  v.index_ = -2;
  for (auto& [k, old] : obj_)
    if (k == key) return old = std::move(v);
  obj_.emplace_back(std::move(key), std::move(v));
  return obj_.back().second;
}

}  // namespace lava
