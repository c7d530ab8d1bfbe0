#include "sweep/sweep_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

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

namespace {

// One row of the sweep: a value of every grid, with the options and seeds its [KEY VALUE] sections give it.
struct SweepRow {
  std::vector<std::pair<std::string, std::string>> grid;
  std::vector<std::pair<std::string, std::string>> options;  // task, fixed, grid, the sections' own; no seed
  const std::vector<int64_t>* seeds = nullptr;
  std::vector<std::string> evals;
};

// The number of rows (the product of the grid sizes) times `per_row`; throws when that is more than max_runs.
int64_t checked_product(const SweepFile& f, int64_t per_row, const std::string& per_row_name, int64_t max_runs) {
  std::string factors;
  for (const SweepGrid& g : f.grid) factors += fmt::format("{} {} x ", g.values.size(), g.key);
  factors += fmt::format("{} {}", per_row, per_row_name);
  // Each factor is checked against the limit before it multiplies (n * k > max_runs exactly when k > max_runs / n),
  // so no product past the limit is ever formed and none can overflow.
  int64_t n = per_row;
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

int64_t row_count(const SweepFile& f, int64_t max_runs) { return checked_product(f, 1, "seed", max_runs); }

SweepRow make_row(const SweepFile& f, size_t i) {
  SweepRow row;
  // Mixed-radix digits of i: the last grid fastest, ..., the first grid slowest.
  std::vector<size_t> pick(f.grid.size());
  for (size_t g = f.grid.size(); g-- > 0;) {
    pick[g] = i % f.grid[g].values.size();
    i /= f.grid[g].values.size();
  }
  for (size_t g = 0; g < f.grid.size(); ++g) row.grid.emplace_back(f.grid[g].key, f.grid[g].values[pick[g]]);
  row.options.emplace_back("task", f.task);
  for (const SweepOption& o : f.fixed) row.options.emplace_back(o.key, o.value);
  for (const auto& kv : row.grid)
    if (kv.first != kSweepLabelKey) row.options.push_back(kv);
  row.seeds = &f.seeds;
  const SweepOverride* seeds_from = nullptr;
  std::map<std::string, const SweepOverride*> set_by;  // option -> the section that set it
  for (const SweepOverride& o : f.overrides) {
    if (std::find(row.grid.begin(), row.grid.end(), std::pair{o.key, o.value}) == row.grid.end()) continue;
    auto clash = [&](const SweepOverride* other, const std::string& what) {
      throw input_error(f.path, o.line, fmt::format("[{} {}] and [{} {}] (line {}) both set {} for the runs with {} = {} "
                                                    "and {} = {}", o.key, o.value, other->key, other->value, other->line,
                                                    what, o.key, o.value, other->key, other->value));
    };
    if (o.seeds) {
      if (seeds_from) clash(seeds_from, "seeds");
      seeds_from = &o;
      row.seeds = &*o.seeds;
    }
    for (const SweepOption& opt : o.options) {
      if (auto [it, fresh] = set_by.emplace(opt.key, &o); !fresh) clash(it->second, opt.key);
      auto same = [&](const auto& kv) { return kv.first == opt.key; };
      if (auto it = std::find_if(row.options.begin(), row.options.end(), same); it != row.options.end())
        it->second = opt.value;
      else
        row.options.emplace_back(opt.key, opt.value);
    }
  }
  for (const SweepEval& e : f.evals) {
    bool runs_it = true;
    for (const SweepGrid& only : e.only)
      for (const auto& [k, v] : row.grid)
        if (k == only.key && std::find(only.values.begin(), only.values.end(), v) == only.values.end()) runs_it = false;
    if (runs_it) row.evals.push_back(e.name);
  }
  return row;
}

}  // namespace

int64_t sweep_run_count(const SweepFile& f, int64_t max_runs) {
  const bool same_seeds = std::none_of(f.overrides.begin(), f.overrides.end(), [](const SweepOverride& o) { return bool(o.seeds); });
  if (same_seeds) return checked_product(f, int64_t(f.seeds.size()), "seeds", max_runs);
  const int64_t rows = row_count(f, max_runs);  // every row has a seed at least: no more rows than runs
  int64_t n = 0;
  for (int64_t i = 0; i < rows; ++i) {
    n += int64_t(make_row(f, size_t(i)).seeds->size());
    if (n > max_runs)
      throw input_error(f.path, 0, fmt::format("{} rows and their seeds make more than {} runs; --max-runs N allows more",
                                               rows, max_runs));
  }
  return n;
}

std::vector<SweepRun> expand_sweep(const SweepFile& f, int64_t max_runs) {
  const int64_t n = sweep_run_count(f, max_runs), rows = row_count(f, max_runs);
  std::vector<SweepRun> runs;
  runs.reserve(size_t(n));
  std::map<std::string, size_t> index_of;  // id -> its run: labelled rows with the same options are one run
  for (int64_t i = 0; i < rows; ++i) {
    const SweepRow row = make_row(f, size_t(i));
    for (const int64_t seed : *row.seeds) {  // seeds innermost
      SweepRun r;
      r.index = int64_t(runs.size());
      r.seed = seed;
      r.grid = row.grid;
      r.options = row.options;
      r.options.emplace_back("seed", std::to_string(seed));
      r.evals = row.evals;
      r.id = run_id(r.options);
      if (auto [it, fresh] = index_of.emplace(r.id, runs.size()); !fresh) {
        auto label = [](const SweepRun& x) {
          for (const auto& [k, v] : x.grid)
            if (k == kSweepLabelKey) return v;
          return std::string("?");
        };
        throw input_error(f.path, 0, fmt::format("rows label = {} and label = {} train with the same options (seed {}): "
                                                 "give them an option that tells them apart, or one label",
                                                 label(runs[it->second]), label(r), seed));
      }
      r.dir = (std::filesystem::path(f.out) / r.id).string();
      runs.push_back(std::move(r));
    }
  }
  return runs;
}

std::string run_config_text(const SweepRun& r) {
  std::string out;
  for (const auto& [k, v] : r.options) out += k + " = " + v + "\n";
  return out;
}

std::string run_config_identity(const std::string& config_text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < config_text.size();) {
    size_t end = config_text.find('\n', start);
    end = end == std::string::npos ? config_text.size() : end + 1;
    const std::string_view line(config_text.data() + start, end - start);
    start = end;
    const size_t eq = line.find(" = ");
    if (eq == std::string_view::npos || option_changes_results(std::string(line.substr(0, eq)))) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (std::string_view l : lines) {
    out += l;
    if (!l.ends_with('\n')) out += '\n';
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
