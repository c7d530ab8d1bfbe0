#include "sweep/sweep_file.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  const size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

// Options every run gets from the sweep itself, each with the reason a sweep file may not set it.
const std::map<std::string, std::string>& options_set_by_sweep() {
  static const std::map<std::string, std::string> m = {
      {"save", "each run saves to its own directory"},
      {"resume", "a stopped run resumes from its own resume state"},
      {"seed", "use seeds = LIST"},
      {"format", "runs write JSON lines"},
      {"config", "the run's config is written by the sweep"},
      {"help", "not an option to sweep"},
      {"quiet", "runs are quiet; their notes go to train.log"},
      {"plot", "every run would draw into the same directory"},
  };
  return m;
}

int64_t parse_seed(std::string_view s) {
  int64_t x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || end != s.data() + s.size() || x < 0)
    throw std::invalid_argument(fmt::format("{} is not a seed (a whole number >= 0)", quote_input(s)));
  return x;
}

std::vector<std::string> split_list(const std::string& value) {
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

}  // namespace

bool option_changes_results(const std::string& key) { return key != "threads" && key != "logits-cache-mb"; }

std::vector<int64_t> parse_seed_list(const std::string& text) {
  std::vector<int64_t> seeds;
  if (trim(text).empty()) throw std::invalid_argument("no seeds");
  for (const std::string& part : split_list(text)) {
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

SweepFile parse_sweep_file(const std::string& path, const std::string& text, const TrainOptionNames& options) {
  SweepFile f;
  f.path = fs::absolute(path).lexically_normal().string();
  f.dir = fs::path(f.path).parent_path().string();
  std::map<std::string, long> first_line;  // option name (grid.K counts as K) -> line that set it
  std::string out;
  long line_no = 0, task_line = 0;
  auto claim = [&](const std::string& name, long line) {
    if (auto it = first_line.find(name); it != first_line.end())
      throw input_error(path, line, fmt::format("duplicate key {} (first set at line {})", quote_input(name, '"'), it->second));
    first_line[name] = line;
  };
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
    if (body[0] == '[') throw input_error(path, line_no, "sections are not supported: write key = value lines");
    const size_t eq = body.find('=');
    if (eq == std::string::npos) throw input_error(path, line_no, "expected key = value");
    const std::string key = trim(std::string_view(body).substr(0, eq)), value = trim(std::string_view(body).substr(eq + 1));
    if (key.empty()) throw input_error(path, line_no, "a line with no key before '='");
    if (key.starts_with("grid.")) {
      const std::string name = key.substr(5);
      if (name.empty()) throw input_error(path, line_no, "grid. needs an option name, e.g. grid.lr = 1e-3, 3e-3");
      if (name == "task" || name == "seeds" || name == "out")
        throw input_error(path, line_no, fmt::format("{} cannot be a grid key", quote_input(name, '"')));
      if (!option_changes_results(name))
        throw input_error(path, line_no, fmt::format("{} cannot be a grid key: results do not depend on it, so its values "
                                                     "would all be one run (set it once, {} = N)", quote_input(name, '"'), name));
      if (value.empty()) throw input_error(path, line_no, fmt::format("empty grid {}: list its values, a, b, c", quote_input(key, '"')));
      SweepGrid g{name, split_list(value), line_no};
      for (size_t i = 0; i < g.values.size(); ++i) {
        if (g.values[i].empty()) throw input_error(path, line_no, fmt::format("grid {} has an empty value", quote_input(key, '"')));
        if (std::find(g.values.begin(), g.values.begin() + long(i), g.values[i]) != g.values.begin() + long(i))
          throw input_error(path, line_no, fmt::format("grid {} lists {} twice", quote_input(key, '"'), quote_input(g.values[i], '"')));
      }
      claim(name, line_no);
      f.grid.push_back(std::move(g));
      continue;
    }
    claim(key, line_no);
    if (key == "seeds") {
      try {
        f.seeds = parse_seed_list(value);
      } catch (const std::invalid_argument& e) {
        throw input_error(path, line_no, std::string("seeds: ") + e.what());
      }
    } else if (key == "out") {
      if (value.empty()) throw input_error(path, line_no, "out needs a directory");
      out = value;
    } else if (key == "task") {
      f.task = value;
      task_line = line_no;
    } else {
      if (value.empty()) throw input_error(path, line_no, fmt::format("{} has no value", quote_input(key, '"')));
      f.fixed.push_back({key, value, line_no});
    }
  }
  // Every option must be one lava train --task TASK knows, and not one the sweep sets itself.
  std::set<std::string> known;
  try {
    known = options(f.task);
  } catch (const UsageError& e) {  // not a task
    throw input_error(path, task_line, e.what());
  }
  auto check_option = [&](const std::string& name, long line) {
    if (auto it = options_set_by_sweep().find(name); it != options_set_by_sweep().end())
      throw input_error(path, line, fmt::format("{} is set by the sweep for each run ({})", quote_input(name, '"'), it->second));
    if (!known.count(name))
      throw input_error(path, line, fmt::format("unknown option {} for lava train --task {}", quote_input(name, '"'), f.task));
  };
  for (const SweepOption& o : f.fixed) check_option(o.key, o.line);
  for (const SweepGrid& g : f.grid) check_option(g.key, g.line);
  const fs::path stem = fs::path(f.path).filename().replace_extension("");
  f.out = (out.empty() ? fs::path(f.dir) / (stem.string() + ".runs") : fs::path(f.dir) / out).lexically_normal().string();
  return f;
}

SweepFile read_sweep_file(const std::string& path, const TrainOptionNames& options) {
  return parse_sweep_file(path, read_file(path, kSettingsLimit), options);
}

}  // namespace lava
