#pragma once
// JSON for LAVA's configs, metadata and safetensors headers: a value type, a strict parser whose
// errors name "FILE:LINE", checked accessors whose errors name the key, and a writer whose numbers
// read back bit-exactly (shortest round-trip digits; NaN/Inf become null, as JSON has neither).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace lava {

class JsonValue {
 public:
  enum class Kind { null, boolean, number, string, array, object };
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;  // insertion order kept

  JsonValue() = default;  // null
  explicit JsonValue(bool b) : kind_(Kind::boolean), bool_(b) {}
  explicit JsonValue(double x) : kind_(Kind::number), num_(x) {}
  // The double is exact up to 2^53; as_int() and the writer keep every int64 exact.
  explicit JsonValue(int64_t x) : kind_(Kind::number), num_(static_cast<double>(x)), exact_int_(true), int_(x) {}
  template <class T>
    requires std::is_integral_v<T> && (!std::is_same_v<T, bool>) && (!std::is_same_v<T, int64_t>)
  explicit JsonValue(T x) : JsonValue(std::in_range<int64_t>(x) ? JsonValue(static_cast<int64_t>(x)) : JsonValue(double(x))) {}
  explicit JsonValue(std::string s) : kind_(Kind::string), str_(std::move(s)) {}
  explicit JsonValue(const char* s) : JsonValue(std::string(s)) {}
  explicit JsonValue(Array a) : kind_(Kind::array), arr_(std::move(a)) {}
  explicit JsonValue(Object o) : kind_(Kind::object), obj_(std::move(o)) {}
  static JsonValue array() { return JsonValue(Array{}); }
  static JsonValue object() { return JsonValue(Object{}); }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::null; }
  bool is_number() const { return kind_ == Kind::number; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_array() const { return kind_ == Kind::array; }
  bool is_object() const { return kind_ == Kind::object; }

  // Checked accessors: the wrong kind throws InputError "FILE:LINE: key "k": expected a number, got a string".
  bool boolean() const;
  double number() const;
  // An integer written without fraction or exponent and within int64 reads back exactly (a seed of 2^63 - 1 too);
  // any other number must be integral and within +-2^53 (exact in a double).
  int64_t as_int() const;
  // The exact integer when the number was one (see as_int), for writers that must not round it through a double.
  const int64_t* exact_int() const { return exact_int_ ? &int_ : nullptr; }
  const std::string& str() const;
  const Array& items() const;
  const Object& members() const;

  // Object lookup (linear; objects here are small). at() throws naming the missing key.
  const JsonValue& at(std::string_view key) const;
  const JsonValue* find(std::string_view key) const;  // nullptr when absent (throws if not an object)
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  // Array element; throws when out of range.
  const JsonValue& operator[](size_t i) const;
  size_t size() const;  // array or object length

  // Building (programmatic values carry no file name).
  JsonValue& push_back(JsonValue v);
  JsonValue& set(std::string key, JsonValue v);  // replaces an existing key

  // Where the value came from, for error messages; parse_json fills these.
  const std::string& file() const;
  long line() const { return line_; }
  std::string what_it_is() const;  // `key "k"`, `element 3` or `value`

 private:
  friend class JsonParser;
  [[noreturn]] void type_error(const char* expected) const;
  const char* kind_name() const;

  Kind kind_ = Kind::null;
  bool bool_ = false;
  double num_ = 0.0;
  bool exact_int_ = false;  // int_ holds the number exactly (num_ may be its rounding)
  int64_t int_ = 0;
  std::string str_;
  Array arr_;
  Object obj_;
  // Origin: source file (shared by every node of one parse), 1-based line, and the key or index
  // under which this value sits in its parent (index < 0 and empty key for the root).
  std::shared_ptr<const std::string> file_;
  long line_ = 0;
  std::string key_;
  long index_ = -1;
};

// Strict RFC 8259 parser. Throws input_error(file_name, line, what) on: bad syntax, trailing garbage,
// unterminated string, bad escape or lone surrogate, raw control character, invalid UTF-8,
// NaN/Infinity literals, numbers a double cannot hold (1e400, and also 1e-400 rather than silently 0),
// duplicate object keys, nesting deeper than 200.
// A leading UTF-8 byte-order mark is skipped.
JsonValue parse_json(std::string_view text, const std::string& file_name);

// Compact one-line writer (no trailing newline).
std::string to_json(const JsonValue& v);
// Building blocks shared with JsonLine and the table writer.
void append_json_number(std::string& out, double x);  // shortest round-trip; NaN/Inf -> null
void append_json_number(std::string& out, float x);   // shortest digits that read back as this float
void append_json_string(std::string& out, std::string_view s);  // quoted; invalid UTF-8 -> U+FFFD

// Streaming builder for one JSON object per line:
//   JsonLine j; j.add("step", 10); j.add("loss", 3.21); j.add_raw("cfg", to_json(cfg)); puts(j.str().c_str());
class JsonLine {
 public:
  JsonLine& add(std::string_view key, double v);
  JsonLine& add(std::string_view key, float v);
  JsonLine& add(std::string_view key, bool v);
  template <class T>
    requires std::is_integral_v<T> && (!std::is_same_v<T, bool>)
  JsonLine& add(std::string_view key, T v) {
    return add_raw(key, std::to_string(v));
  }
  JsonLine& add(std::string_view key, std::string_view v);
  JsonLine& add(std::string_view key, const char* v) { return add(key, std::string_view(v)); }
  JsonLine& add(std::string_view key, const std::string& v) { return add(key, std::string_view(v)); }
  JsonLine& add(std::string_view key, std::span<const double> v);
  JsonLine& add(std::string_view key, std::span<const float> v);
  JsonLine& add(std::string_view key, const std::vector<double>& v) { return add(key, std::span<const double>(v)); }
  JsonLine& add(std::string_view key, const std::vector<float>& v) { return add(key, std::span<const float>(v)); }
  JsonLine& add(std::string_view key, const std::vector<std::string>& v);
  JsonLine& add(std::string_view key, const JsonValue& v);
  JsonLine& add_null(std::string_view key);
  // `json` must already be one valid JSON value (e.g. another JsonLine's str()); it is copied verbatim.
  JsonLine& add_raw(std::string_view key, std::string_view json);
  std::string str() const { return buf_.empty() ? "{}" : buf_ + "}"; }

 private:
  void key(std::string_view k);
  std::string buf_;
  std::vector<std::string> keys_;  // to catch duplicate keys (our own parser rejects them)
};

}  // namespace lava
