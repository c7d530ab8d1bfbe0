#include "sweep/sweep_sections.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

namespace {

std::string trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  const size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

int64_t parse_seed(std::string_view s) {
  int64_t x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || end != s.data() + s.size() || x < 0)
    throw std::invalid_argument(fmt::format("{} is not a seed (a whole number >= 0)", quote_input(s)));
  return x;
}

// A scale's or an evaluation's name becomes part of a file name (RUN/eval/NAME.jsonl) and of a command line.
bool good_name(const std::string& s) {
  if (s.empty() || s[0] == '.' || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

// "[scale medium, attn var-enum]" -> the section's kind and selectors; throws for anything else.
SweepSection parse_header(const std::string& path, long line, const std::string& body) {
  SweepSection s;
  s.line = line;
  s.header = body;
  const std::string usage = "expected [scale NAME], [KEY VALUE], [scale NAME, KEY VALUE], [eval NAME] or "
                            "[scale NAME, eval NAME]";
  if (body.back() != ']') throw input_error(path, line, fmt::format("unknown section {}: {}", quote_input(body), usage));
  const std::string inner = trim(std::string_view(body).substr(1, body.size() - 2));
  bool has_grid = false;
  for (const std::string& sel : split_sweep_list(inner)) {
    const size_t space = sel.find_first_of(" \t");
    const std::string word = sel.substr(0, space), name = space == std::string::npos ? "" : trim(sel.substr(space));
    if (sel.empty() || name.empty() || name.find_first_of(" \t") != std::string::npos)
      throw input_error(path, line, fmt::format("unknown section {}: {}", quote_input(body), usage));
    std::string* field = word == "scale" ? &s.scale : word == "eval" ? &s.eval : &s.value;
    if (!field->empty() || (field == &s.value && has_grid))
      throw input_error(path, line, fmt::format("section {} names {} twice: {}", quote_input(body), word, usage));
    if (field != &s.value && !good_name(name))
      throw input_error(path, line, fmt::format("section {}: {} is no {} name (letters, digits, _ - .)",
                                                quote_input(body), quote_input(name), word));
    *field = name;
    if (field == &s.value) s.key = word, has_grid = true;
  }
  if (!s.eval.empty() && has_grid)
    throw input_error(path, line, fmt::format("section {}: an evaluation takes only.{} = ..., not a grid value in its header",
                                              quote_input(body), s.key));
  s.kind = !s.eval.empty() ? SweepSectionKind::eval : has_grid ? SweepSectionKind::row : SweepSectionKind::scale;
  return s;
}

// One key = value line of section `s`. `first_line` holds the keys the section has set (grid.K and only.K count
// as K), for the duplicate check.
void add_line(const std::string& path, SweepSection& s, std::map<std::string, long>& first_line, const std::string& key,
              const std::string& value, long line) {
  using K = SweepSectionKind;
  const std::string where = s.kind == K::top ? "above the sections" : "in " + s.header;
  auto claim = [&](const std::string& name) {
    if (auto it = first_line.find(name); it != first_line.end())
      throw input_error(path, line, fmt::format("duplicate key {} (first set at line {})", quote_input(name, '"'), it->second));
    first_line[name] = line;
  };
  auto refuse = [&](const std::string& why) {
    throw input_error(path, line, fmt::format("{} cannot be set {}: {}", quote_input(key, '"'), where, why));
  };
  const bool grid_key = key.starts_with("grid."), only_key = key.starts_with("only.");
  if (grid_key || only_key) {
    const std::string name = key.substr(5);
    if (grid_key && (s.kind == K::row || s.kind == K::eval)) refuse("grids belong above the sections or in a [scale] one");
    if (only_key && s.kind != K::eval) refuse("only.K belongs in an [eval] section");
    if (name.empty()) throw input_error(path, line, fmt::format("{} needs an option name, e.g. {}attn = soft, marginal", key, key));
    if (name == "task" || name == "seeds" || name == "out" || name == "scale")
      throw input_error(path, line, fmt::format("{} cannot be a grid key", quote_input(name, '"')));
    if (grid_key && !option_changes_results(name))
      throw input_error(path, line, fmt::format("{} cannot be a grid key: results do not depend on it, so its values "
                                                "would all be one run (set it once, {} = N)", quote_input(name, '"'), name));
    if (value.empty()) throw input_error(path, line, fmt::format("empty grid {}: list its values, a, b, c", quote_input(key, '"')));
    SweepGrid g{name, split_sweep_list(value), line};
    for (size_t i = 0; i < g.values.size(); ++i) {
      if (g.values[i].empty()) throw input_error(path, line, fmt::format("grid {} has an empty value", quote_input(key, '"')));
      if (std::find(g.values.begin(), g.values.begin() + long(i), g.values[i]) != g.values.begin() + long(i))
        throw input_error(path, line, fmt::format("grid {} lists {} twice", quote_input(key, '"'), quote_input(g.values[i], '"')));
    }
    claim(name);
    s.grid.push_back(std::move(g));
    return;
  }
  claim(key);
  if (key == "seeds") {
    if (s.kind == K::eval) refuse("an evaluation runs once per run");
    try {
      s.seeds = parse_seed_list(value);
    } catch (const std::invalid_argument& e) {
      throw input_error(path, line, std::string("seeds: ") + e.what());
    }
    s.seeds_line = line;
  } else if (key == "out") {
    if (s.kind == K::row || s.kind == K::eval) refuse("every run of a scale goes under one out");
    if (value.empty()) throw input_error(path, line, "out needs a directory");
    s.out = value, s.out_line = line;
  } else if (key == "task") {
    if (s.kind != K::top) refuse("one file is one task");
    s.task = value, s.task_line = line;
  } else if (key == "scale") {
    if (s.kind != K::top) refuse("scale = NAME (the default scale) goes above the sections");
    if (!good_name(value)) throw input_error(path, line, fmt::format("scale: {} is not a scale name", quote_input(value)));
    s.default_scale = value, s.default_scale_line = line;
  } else {
    if (value.empty()) throw input_error(path, line, fmt::format("{} has no value", quote_input(key, '"')));
    s.options.push_back({key, value, line});
  }
}

}  // namespace

std::vector<std::string> split_sweep_list(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    out.push_back(trim(std::string_view(value).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int64_t> parse_seed_list(const std::string& text) {
  std::vector<int64_t> seeds;
  if (trim(text).empty()) throw std::invalid_argument("no seeds");
  for (const std::string& part : split_sweep_list(text)) {
    if (part.empty()) throw std::invalid_argument("an empty entry in the seed list");
    // From 1: a leading '-' is a sign (and "-1" is refused as negative), not a range's dash.
    const size_t dash = part.find('-', 1);
    if (dash == std::string::npos) {
      seeds.push_back(parse_seed(part));
      continue;
    }
    const int64_t lo = parse_seed(trim(part.substr(0, dash))), hi = parse_seed(trim(part.substr(dash + 1)));
    if (hi < lo) throw std::invalid_argument(fmt::format("{} is an empty range", quote_input(part)));
    if (hi - lo >= 100000) throw std::invalid_argument(fmt::format("{} has more than 100000 seeds", quote_input(part)));
    // Counted, not compared: `s <= hi` holds for every int64 when hi is its largest value.
    for (int64_t k = 0; k <= hi - lo; ++k) seeds.push_back(lo + k);
  }
  std::vector<int64_t> sorted = seeds;
  std::sort(sorted.begin(), sorted.end());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
    throw std::invalid_argument(fmt::format("seed {} appears twice", *dup));
  return seeds;
}

std::vector<SweepSection> read_sweep_sections(const std::string& path, const std::string& text) {
  std::vector<SweepSection> sections(1);
  std::vector<std::map<std::string, long>> keys(1);
  std::map<std::string, long> header_line;  // canonical header -> line, for repeated sections
  long line_no = 0;
  // A UTF-8 byte-order mark (some Windows editors write one) is not part of the first key.
  size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line(text, start, end - start);
    start = end + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::string body = trim(line);
    if (body.empty() || body[0] == ';') continue;
    if (body[0] == '[') {
      SweepSection s = parse_header(path, line_no, body);
      const std::string canonical = s.scale + "\n" + s.key + "\n" + s.value + "\n" + s.eval;
      if (auto [it, fresh] = header_line.emplace(canonical, line_no); !fresh)
        throw input_error(path, line_no, fmt::format("section {} repeated (first at line {})", quote_input(body), it->second));
      sections.push_back(std::move(s));
      keys.emplace_back();
      continue;
    }
    const size_t eq = body.find('=');
    if (eq == std::string::npos) throw input_error(path, line_no, "expected key = value");
    const std::string key = trim(std::string_view(body).substr(0, eq)), value = trim(std::string_view(body).substr(eq + 1));
    if (key.empty()) throw input_error(path, line_no, "a line with no key before '='");
    add_line(path, sections.back(), keys.back(), key, value, line_no);
  }
  return sections;
}

}  // namespace lava
