#include "sweep/sweep_plan.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/json.hpp"

namespace lava {

std::string run_id(const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<std::string> lines;
  for (const auto& [k, v] : options)
    if (option_changes_results(k)) lines.push_back(k + "=" + v + "\n");
  std::sort(lines.begin(), lines.end());
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64: h = (h ^ byte) * 0x100000001b3
  for (const std::string& l : lines)
    for (unsigned char c : l) h = (h ^ c) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

int64_t sweep_run_count(const SweepFile& f, int64_t max_runs) {
  std::string factors;
  for (const SweepGrid& g : f.grid) factors += fmt::format("{} {} x ", g.values.size(), g.key);
  factors += fmt::format("{} seeds", f.seeds.size());
  // Each factor is checked against the limit before it multiplies (n * k > max_runs exactly when k > max_runs / n),
  // so no product past the limit is ever formed and none can overflow.
  int64_t n = int64_t(f.seeds.size());
  bool over = n > max_runs;
  for (size_t g = 0; g < f.grid.size() && !over; ++g) {
    const int64_t k = int64_t(f.grid[g].values.size());
    over = k > max_runs / n;
    if (!over) n *= k;
  }
  if (over)
    throw input_error(f.path, 0, fmt::format("{} make more than {} runs; --max-runs N allows more", factors, max_runs));
  return n;
}

std::vector<SweepRun> expand_sweep(const SweepFile& f, int64_t max_runs) {
  const size_t n = size_t(sweep_run_count(f, max_runs));
  std::vector<SweepRun> runs;
  runs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    SweepRun r;
    r.index = int64_t(i);
    // Mixed-radix digits of i: seeds vary fastest, then the last grid, ..., the first grid slowest.
    size_t rest = i;
    r.seed = f.seeds[rest % f.seeds.size()];
    rest /= f.seeds.size();
    std::vector<size_t> pick(f.grid.size());
    for (size_t g = f.grid.size(); g-- > 0;) {
      pick[g] = rest % f.grid[g].values.size();
      rest /= f.grid[g].values.size();
    }
    r.options.emplace_back("task", f.task);
    for (const SweepOption& o : f.fixed) r.options.emplace_back(o.key, o.value);
    for (size_t g = 0; g < f.grid.size(); ++g) {
      r.grid.emplace_back(f.grid[g].key, f.grid[g].values[pick[g]]);
      r.options.emplace_back(f.grid[g].key, f.grid[g].values[pick[g]]);
    }
    r.options.emplace_back("seed", std::to_string(r.seed));
    r.id = run_id(r.options);
    r.dir = (std::filesystem::path(f.out) / r.id).string();
    runs.push_back(std::move(r));
  }
  return runs;
}

std::string run_config_text(const SweepRun& r) {
  std::string out;
  for (const auto& [k, v] : r.options) out += k + " = " + v + "\n";
  return out;
}

std::string run_config_identity(const std::string& config_text) {
  std::string out;
  for (size_t start = 0; start < config_text.size();) {
    size_t end = config_text.find('\n', start);
    end = end == std::string::npos ? config_text.size() : end + 1;
    const std::string_view line(config_text.data() + start, end - start);
    start = end;
    const size_t eq = line.find(" = ");
    if (eq == std::string_view::npos || option_changes_results(std::string(line.substr(0, eq)))) out += line;
  }
  return out;
}

std::string run_info_json(const SweepFile& f, const SweepRun& r) {
  JsonValue grid = JsonValue::object();
  for (const auto& [k, v] : r.grid) grid.set(k, JsonValue(v));
  JsonLine j;
  j.add("id", r.id).add("index", r.index).add("sweep", f.path).add("task", f.task).add("seed", r.seed);
  j.add("grid", grid);
  return j.str() + "\n";
}

const SweepRun& find_run(const SweepFile& f, const std::vector<SweepRun>& runs, const std::string& id) {
  for (const SweepRun& r : runs)
    if (r.id == id) return r;
  throw input_error(f.path, 0, fmt::format("no run {} in this sweep (was the file changed since the plan was made?)", id));
}

}  // namespace lava
