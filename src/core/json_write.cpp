// The JSON writer: compact values, shortest round-trip numbers, escaped strings, and JsonLine for one object per line.
#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/utf8.hpp"
#include "core/json.hpp"

namespace lava {

// ---------------------------------------------------------------- writer

void append_json_number(std::string& out, double x) {
  if (!std::isfinite(x)) return void(out += "null");
  fmt::format_to(std::back_inserter(out), "{}", x);  // fmt 9: shortest digits that round-trip
}

void append_json_number(std::string& out, float x) {
  if (!std::isfinite(x)) return void(out += "null");
  fmt::format_to(std::back_inserter(out), "{}", x);
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    const unsigned c = p[i];
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c == '\b') out += "\\b";
    else if (c == '\f') out += "\\f";
    else if (c < 0x20) fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    else if (c >= 0x80) {
      size_t n = utf8_sequence_length(p + i, s.size() - i);
      if (n == 0) {
        out += "\\ufffd";  // keep the output valid UTF-8 whatever bytes we were handed
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    } else out += char(c);
    ++i;
  }
  out += '"';
}

namespace {
void append_value(std::string& out, const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::null: out += "null"; break;
    case JsonValue::Kind::boolean: out += v.boolean() ? "true" : "false"; break;
    case JsonValue::Kind::number:
      if (const int64_t* i = v.exact_int()) out += std::to_string(*i);
      else append_json_number(out, v.number());
      break;
    case JsonValue::Kind::string: append_json_string(out, v.str()); break;
    case JsonValue::Kind::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v.items()) {
        if (!first) out += ',';
        first = false;
        append_value(out, e);
      }
      out += ']';
      break;
    }
    case JsonValue::Kind::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, e] : v.members()) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, k);
        out += ':';
        append_value(out, e);
      }
      out += '}';
      break;
    }
  }
}
}  // namespace

std::string to_json(const JsonValue& v) {
  std::string out;
  append_value(out, v);
  return out;
}

// ---------------------------------------------------------------- JsonLine

void JsonLine::key(std::string_view k) {
  LAVA_CHECK(std::find(keys_.begin(), keys_.end(), k) == keys_.end(), "duplicate key \"{}\" in a JSON line", k);
  keys_.emplace_back(k);
  buf_ += buf_.empty() ? '{' : ',';
  append_json_string(buf_, k);
  buf_ += ':';
}

JsonLine& JsonLine::add(std::string_view k, double v) {
  key(k);
  append_json_number(buf_, v);
  return *this;
}
JsonLine& JsonLine::add(std::string_view k, float v) {
  key(k);
  append_json_number(buf_, v);
  return *this;
}
JsonLine& JsonLine::add(std::string_view k, bool v) { return add_raw(k, v ? "true" : "false"); }
JsonLine& JsonLine::add(std::string_view k, std::string_view v) {
  key(k);
  append_json_string(buf_, v);
  return *this;
}
JsonLine& JsonLine::add_null(std::string_view k) { return add_raw(k, "null"); }
JsonLine& JsonLine::add(std::string_view k, const JsonValue& v) { return add_raw(k, to_json(v)); }

template <class Seq, class Append>
static void append_list(std::string& out, const Seq& seq, Append append) {
  out += '[';
  for (size_t i = 0; i < seq.size(); ++i) {
    if (i) out += ',';
    append(out, seq[i]);
  }
  out += ']';
}

JsonLine& JsonLine::add(std::string_view k, std::span<const double> v) {
  key(k);
  append_list(buf_, v, [](std::string& o, double x) { append_json_number(o, x); });
  return *this;
}
JsonLine& JsonLine::add(std::string_view k, std::span<const float> v) {
  key(k);
  append_list(buf_, v, [](std::string& o, float x) { append_json_number(o, x); });
  return *this;
}
JsonLine& JsonLine::add(std::string_view k, const std::vector<std::string>& v) {
  key(k);
  append_list(buf_, v, [](std::string& o, const std::string& s) { append_json_string(o, s); });
  return *this;
}

JsonLine& JsonLine::add_raw(std::string_view k, std::string_view json) {
  key(k);
  buf_ += json;
  return *this;
}

}  // namespace lava
