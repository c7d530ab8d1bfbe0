// JSON: strict parsing with FILE:LINE errors, checked accessors, bit-exact number round trips, escaping, JsonLine.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/json.hpp"

using lava::JsonValue;
using lava::parse_json;

namespace {

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The InputError message parse_json gives for `text`, or "" if it parsed.
std::string parse_error(std::string_view text) {
  try {
    parse_json(text, "f.json");
  } catch (const lava::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json: parses a document, keeps key order, accessors read it") {
  JsonValue v = parse_json("{\"b\": [1, 2.5, -3e2, true, null],\n \"a\": {\"s\": \"x\\ty\"}, \"z\": false}", "f.json");
  REQUIRE(v.is_object());
  REQUIRE(v.members().size() == 3);
  CHECK(v.members()[0].first == "b");  // insertion order, not sorted
  CHECK(v.members()[1].first == "a");
  CHECK(v.at("b").size() == 5);
  CHECK(v.at("b")[0].as_int() == 1);
  CHECK(v.at("b")[1].number() == 2.5);
  CHECK(v.at("b")[2].as_int() == -300);
  CHECK(v.at("b")[3].boolean());
  CHECK(v.at("b")[4].is_null());
  CHECK(v.at("a").at("s").str() == "x\ty");
  CHECK(v.at("a").line() == 2);
  CHECK_FALSE(v.at("z").boolean());
  CHECK(v.contains("z"));
  CHECK_FALSE(v.contains("q"));
  CHECK(parse_json("\xEF\xBB\xBF[1]", "f").size() == 1);  // a byte-order mark is skipped...
  CHECK_THROWS_AS(parse_json(" \xEF\xBB\xBF[1]", "f"), lava::InputError);  // ...only at the very start
}

TEST_CASE("json: every kind of bad input is an InputError with file and line") {
  struct Bad {
    std::string text;
    int line;
    const char* says;
  };
  std::string deep_ok(200, '['), deep_bad(201, '[');
  deep_ok += std::string(200, ']');
  deep_bad += std::string(201, ']');
  CHECK(parse_error(deep_ok).empty());
  const std::vector<Bad> cases = {
      {"", 1, "empty"},
      {"{\"a\": 1,\n \"b\" 2}", 2, "expected ':'"},
      {"[1, 2,\n]", 2, "expected a value"},
      {"{\"a\": 1,}", 1, "expected a \"key\""},
      {"{\"a\": 1}\n\n x", 3, "after the JSON value"},
      {"[1] [2]", 1, "after the JSON value"},
      {"\n[\"abc", 2, "unterminated string"},
      {"\n[\"abc\n\"]", 2, "unterminated string"},
      {"[\"a\\qb\"]", 1, "bad escape"},
      {"[\"\\u12G4\"]", 1, "hex digit"},
      {"[\"\\uD800x\"]", 1, "surrogate"},
      {"[\"\\uDC00\"]", 1, "surrogate"},
      {"[\"a\tb\"]", 1, "control character"},
      {"\n\n[\"\xC0\x80\"]", 3, "UTF-8"},          // overlong NUL
      {"[\"\xED\xA0\x80\"]", 1, "UTF-8"},          // UTF-16 surrogate encoded in UTF-8
      {"[\"\xF5\x80\x80\x80\"]", 1, "UTF-8"},      // beyond U+10FFFF
      {"[\"\xE2\x82\"]", 1, "UTF-8"},              // truncated sequence
      {"[\"\x80\"]", 1, "UTF-8"},                  // lone continuation byte
      {"{\"x\": NaN}", 1, "NaN"},
      {"[\n-Infinity]", 2, "NaN"},
      {"[Infinity]", 1, "NaN"},
      {"[01]", 1, "leading zeros"},
      {"[1.]", 1, "after '.'"},
      {"[1e]", 1, "exponent"},
      {"[-]", 1, "digit"},
      {"[+1]", 1, "unexpected '+'"},
      {"[1e400]", 1, "range"},
      {"[1e-400]", 1, "range"},  // underflow is refused too, rather than read as 0
      {"[tru]", 1, "unexpected"},
      {"{\"k\": 1,\n\"k\": 2}", 2, "duplicate key \"k\""},
      {"[1, 2", 1, "missing ']'"},
      {"\n" + deep_bad, 2, "nesting deeper than 200"},
  };
  for (const Bad& b : cases) {
    std::string msg = parse_error(b.text);
    INFO("input: ", b.text, "\nmessage: ", msg);
    CHECK(msg.starts_with("f.json:" + std::to_string(b.line) + ": "));
    CHECK(msg.find(b.says) != std::string::npos);
  }
}

TEST_CASE("json: accessors name the file, line and key on a missing key or a wrong type") {
  JsonValue v = parse_json("{\n\"lr\": \"fast\",\n\"n\": 2.5, \"big\": 1e300, \"obj\": {\"x\": 1}}", "cfg.json");
  auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const lava::InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message([&] { v.at("epochs"); }) == "cfg.json:1: missing key \"epochs\"");
  CHECK(message([&] { v.at("obj").at("y"); }) == "cfg.json:3: missing key \"y\" (in key \"obj\")");
  CHECK(message([&] { v.at("lr").number(); }) == "cfg.json:2: key \"lr\": expected a number, got a string");
  CHECK(message([&] { v.at("n").as_int(); }) == "cfg.json:3: key \"n\": expected an integer, got 2.5");
  CHECK(message([&] { v.at("big").as_int(); }).find("expected an integer") != std::string::npos);
  CHECK(message([&] { v.at("obj").items(); }) == "cfg.json:3: key \"obj\": expected an array, got an object");
  CHECK(message([&] { v.at("obj")[0]; }).find("expected an array") != std::string::npos);
  JsonValue a = parse_json("[1,\n[2]]", "a.json");
  CHECK(message([&] { a[1].str(); }) == "a.json:2: element 1: expected a string, got an array");
  CHECK(message([&] { a[2]; }).find("needs more than 2 elements") != std::string::npos);
  CHECK(a[0].as_int() == 1);
}

TEST_CASE("json: doubles and floats round-trip bit-exactly; NaN and Inf become null") {
  uint64_t seed = 7;
  std::vector<double> xs = {0.0, -0.0, 0.1, 1.0 / 3, 1e21, 1e-7, 5e-324, 2.2250738585072014e-308,
                            std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(), 9007199254740993.0};
  for (int i = 0; i < 20000; ++i) {
    double x = std::bit_cast<double>(splitmix(seed));
    if (std::isfinite(x)) xs.push_back(x);
    xs.push_back(double(int64_t(splitmix(seed) % 2000001) - 1000000) / 1000.0);
  }
  for (double x : xs) {
    std::string out;
    lava::append_json_number(out, x);
    double back = parse_json(out, "n").number();
    INFO(out);
    REQUIRE(std::bit_cast<uint64_t>(back) == std::bit_cast<uint64_t>(x));
  }
  for (int i = 0; i < 20000; ++i) {
    float f = std::bit_cast<float>(uint32_t(splitmix(seed)));
    if (!std::isfinite(f)) continue;
    std::string out;
    lava::append_json_number(out, f);
    float back = float(parse_json(out, "n").number());
    INFO(out);
    REQUIRE(std::bit_cast<uint32_t>(back) == std::bit_cast<uint32_t>(f));
  }
  CHECK(lava::to_json(JsonValue(std::nan(""))) == "null");
  CHECK(lava::to_json(JsonValue(-HUGE_VAL)) == "null");
  std::string f;
  lava::append_json_number(f, std::numeric_limits<float>::infinity());
  CHECK(f == "null");
}

TEST_CASE("json: strings escape control characters and survive a round trip") {
  std::string all;
  for (int c = 1; c < 128; ++c) all += char(c);
  all += "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // é € 😀
  all += '\0';
  std::string out;
  lava::append_json_string(out, all);
  CHECK(out.find("\\u0001") != std::string::npos);
  CHECK(out.find("\\u001f") != std::string::npos);
  CHECK(out.find("\\n") != std::string::npos);
  CHECK(out.find("\\u0000") != std::string::npos);
  CHECK(parse_json(out, "s").str() == all);
  // \u escapes, including a surrogate pair, decode to UTF-8.
  CHECK(parse_json("\"\\u00e9\\u20AC\\uD83D\\uDE00\\/\"", "s").str() == "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80/");
  // Invalid UTF-8 handed to the writer comes out as U+FFFD, so the output always parses.
  std::string bad;
  lava::append_json_string(bad, "a\xFF" "b\xE2\x82");
  CHECK(bad == "\"a\\ufffdb\\ufffd\\ufffd\"");
  CHECK(parse_json(bad, "s").str() == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("json: built values and JsonLine write compact JSON that reads back") {
  JsonValue v = JsonValue::object();
  v.set("name", JsonValue("soft"));
  JsonValue arr = JsonValue::array();
  arr.push_back(JsonValue(1.5));
  arr.push_back(JsonValue());
  arr.push_back(JsonValue(true));
  arr.push_back(JsonValue(7));
  v.set("xs", std::move(arr));
  v.set("name", JsonValue("hard"));  // replaces in place
  CHECK(lava::to_json(v) == "{\"name\":\"hard\",\"xs\":[1.5,null,true,7]}");

  lava::JsonLine j;
  j.add("step", 10).add("loss", 0.1 + 0.2).add("ok", true).add("name", "a\"b");
  j.add("v", std::vector<double>{1.0, -0.5, NAN});
  j.add("f", std::vector<float>{0.1f});
  j.add("tags", std::vector<std::string>{"x", "y"});
  j.add_raw("nested", lava::to_json(v));
  j.add("big", int64_t(1) << 40).add("u", 3u).add_null("nothing");
  const std::string s = j.str();
  CHECK(s ==
        "{\"step\":10,\"loss\":0.30000000000000004,\"ok\":true,\"name\":\"a\\\"b\",\"v\":[1,-0.5,null],"
        "\"f\":[0.1],\"tags\":[\"x\",\"y\"],\"nested\":{\"name\":\"hard\",\"xs\":[1.5,null,true,7]},"
        "\"big\":1099511627776,\"u\":3,\"nothing\":null}");
  JsonValue back = parse_json(s, "line");
  CHECK(back.at("loss").number() == 0.1 + 0.2);
  CHECK(back.at("nested").at("xs")[0].number() == 1.5);
  CHECK(back.at("big").as_int() == (int64_t(1) << 40));
  CHECK(lava::JsonLine().str() == "{}");
  lava::JsonLine dup;
  dup.add("k", 1);
  CHECK_THROWS_AS(dup.add("k", 2), std::logic_error);
}

TEST_CASE("json: mutated documents either parse or throw InputError, never anything else") {
  const std::string doc =
      "{\"a\": [1, -2.5e-3, true, false, null], \"b\": {\"c\": \"d\\u00e9\\n\"}, \"e\": \"\xE2\x82\xAC\"}";
  const std::string alphabet = "{}[]\",:\\-+.eE0123456789tfnu \n\x80\xC3\xFF";
  uint64_t seed = 11;
  int parsed = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string t = doc;
    int edits = 1 + int(splitmix(seed) % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = splitmix(seed) % t.size();
      char c = alphabet[splitmix(seed) % alphabet.size()];
      switch (splitmix(seed) % 3) {
        case 0: t[pos] = c; break;
        case 1: t.insert(t.begin() + long(pos), c); break;
        default: t.erase(pos, 1);
      }
    }
    try {
      JsonValue v = parse_json(t, "fuzz.json");
      CHECK(parse_json(lava::to_json(v), "again").kind() == v.kind());  // what parses, writes and re-parses
      ++parsed;
    } catch (const lava::InputError& e) {
      CHECK(std::string(e.what()).starts_with("fuzz.json:"));
      ++rejected;
    }
  }
  CHECK(parsed > 0);
  CHECK(rejected > 0);
}
