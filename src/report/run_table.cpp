#include "report/run_table.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

std::string seed_ranges(std::vector<int64_t> seeds) {
  std::sort(seeds.begin(), seeds.end());
  std::string out;
  for (size_t i = 0; i < seeds.size();) {
    size_t j = i;
    while (j + 1 < seeds.size() && seeds[j] < std::numeric_limits<int64_t>::max() && seeds[j + 1] == seeds[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(seeds[i]) : fmt::format("{}-{}", seeds[i], seeds[j]);
    i = j + 1;
  }
  return out;
}

namespace {

// An evaluation's result row by name, nullptr when the run has none of that name.
const JsonValue* eval_row(const RunRecord& r, const std::string& name) {
  for (const auto& [n, row] : r.evals)
    if (n == name) return &row;
  return nullptr;
}

// The figure `name` of a run: for EVAL:KEY, KEY of the evaluation EVAL's result row; else summary key name, else
// valid_name; nullopt when none is a number.
std::optional<double> figure(const RunRecord& r, const std::string& name) {
  if (const size_t colon = name.find(':'); colon != std::string::npos) {
    const JsonValue* row = eval_row(r, name.substr(0, colon));
    const JsonValue* v = row ? row->find(name.substr(colon + 1)) : nullptr;
    if (v && v->is_number()) return v->number();
    return std::nullopt;
  }
  if (!r.summary) return std::nullopt;
  for (const std::string& key : {name, "valid_" + name})
    if (const JsonValue* v = r.summary->find(key); v && v->is_number()) return v->number();
  return std::nullopt;
}

bool finished_ok(const RunRecord& r) {
  return r.unreadable.empty() && r.status.state == RunState::finished && r.summary && !r.nan;
}

// Why a run is not in its group's figures.
std::string unfinished_state(const RunRecord& r) {
  if (!r.unreadable.empty()) return "unreadable: " + one_line(r.unreadable);
  switch (r.status.state) {
    case RunState::finished: return r.nan ? "failed (NaN)" : "failed (no done line)";
    case RunState::failed: return r.nan ? "failed (NaN)" : fmt::format("failed (exit {})", r.status.exit_code);
    case RunState::stopped: return fmt::format("stopped ({}), resumable", r.status.signal);
    case RunState::running: return "running, or killed";
    case RunState::not_started: return "not started";
  }
  return "?";
}

// How far an unfinished run got: "; epoch 3: ppl 9.5" from its last epoch line, with the validation figure of each
// of the table's metrics that line has (valid_M); "" without an epoch line. A run training for hours is watched so.
std::string progress_of(const RunRecord& r, const std::vector<std::string>& metrics) {
  if (!r.unreadable.empty() || !r.last_epoch) return "";
  const JsonValue* epoch = r.last_epoch->find("epoch");
  if (!epoch || !epoch->is_number()) return "";
  std::string figures;
  for (const std::string& m : metrics)
    if (const JsonValue* v = r.last_epoch->find("valid_" + m); v && v->is_number())
      figures += fmt::format("{}{} {:.4g}", figures.empty() ? ": " : ", ", m, v->number());
  return fmt::format("; epoch {:g}{}", epoch->number(), figures);
}

struct Group {
  std::string sweep;
  std::vector<std::string> values;  // one per grid key of the table
  std::vector<const RunRecord*> runs;
};

struct MeanSd {
  double mean = std::numeric_limits<double>::quiet_NaN(), sd = std::numeric_limits<double>::quiet_NaN();
  size_t n = 0;
};

// Two passes in the runs' order: the same runs give the same bits.
MeanSd mean_sd(const std::vector<double>& x) {
  MeanSd m;
  m.n = x.size();
  if (x.empty()) return m;
  double sum = 0;
  for (double v : x) sum += v;
  m.mean = sum / double(x.size());
  if (x.size() > 1) {
    double ss = 0;
    for (double v : x) ss += (v - m.mean) * (v - m.mean);
    m.sd = std::sqrt(ss / double(x.size() - 1));
  }
  return m;
}

}  // namespace

Table run_table(const std::vector<RunRecord>& in, const RunTableOptions& o, bool human) {
  std::vector<const RunRecord*> runs;
  for (const RunRecord& r : in) runs.push_back(&r);
  std::stable_sort(runs.begin(), runs.end(), [](const RunRecord* a, const RunRecord* b) {
    // Runs whose run.json is unreadable (no sweep) last.
    if (a->sweep.empty() != b->sweep.empty()) return b->sweep.empty();
    return a->sweep != b->sweep ? a->sweep < b->sweep : a->index < b->index;
  });
  std::vector<std::string> keys, sweeps;
  for (const RunRecord* r : runs) {
    for (const auto& [k, v] : r->grid)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    // A run whose run.json is unreadable has no sweep: it is no extra sweep of the table.
    if (!r->sweep.empty() && std::find(sweeps.begin(), sweeps.end(), r->sweep) == sweeps.end()) sweeps.push_back(r->sweep);
  }
  // A figure no finished run reports is a typo, not a blank column.
  bool any_ok = false;
  for (const std::string& m : o.metrics) {
    bool found = false;
    for (const RunRecord* r : runs) {
      any_ok = any_ok || finished_ok(*r);
      found = found || (finished_ok(*r) && figure(*r, m));
    }
    if (!found && any_ok) {
      const size_t colon = m.find(':');
      std::string have;
      for (const RunRecord* r : runs)
        if (finished_ok(*r)) {
          if (colon == std::string::npos) {
            for (const auto& [k, v] : r->summary->members())
              if (v.is_number()) have += (have.empty() ? "" : ", ") + k;
          } else if (const JsonValue* row = eval_row(*r, m.substr(0, colon))) {
            for (const auto& [k, v] : row->members())
              if (v.is_number()) have += (have.empty() ? "" : ", ") + m.substr(0, colon + 1) + k;
          } else {
            for (const auto& [n, row] : r->evals) have += (have.empty() ? "evaluations " : ", ") + n;
            if (have.empty()) have = "no evaluations";
          }
          break;
        }
      if (colon != std::string::npos)
        throw UsageError(fmt::format("lava report: no finished run reports \"{}\" (the key {} of its evaluation eval/{}.jsonl; "
                                     "a run has: {})", m, m.substr(colon + 1), m.substr(0, colon), have));
      throw UsageError(fmt::format("lava report: no finished run reports \"{}\" or \"valid_{}\" (a run reports: {})", m, m, have));
    }
  }

  std::vector<Group> groups;
  for (const RunRecord* r : runs) {
    Group g{r->sweep, {}, {}};
    for (const std::string& k : keys) {
      auto it = std::find_if(r->grid.begin(), r->grid.end(), [&](const auto& kv) { return kv.first == k; });
      g.values.push_back(it == r->grid.end() ? "-" : it->second);
    }
    auto same = std::find_if(groups.begin(), groups.end(),
                             [&](const Group& h) { return h.sweep == g.sweep && h.values == g.values; });
    if (same == groups.end()) groups.push_back(std::move(g)), same = groups.end() - 1;
    same->runs.push_back(r);
  }

  Table t;
  const bool several_sweeps = sweeps.size() > 1;
  if (several_sweeps) t.add_column("sweep");
  for (const std::string& k : keys) t.add_column(k);
  t.add_column("seeds");
  if (!human) t.add_column("n");
  for (const std::string& m : o.metrics) {
    t.add_column(m);
    if (!human) t.add_column(m + "_sd");
  }
  t.add_column("status");
  // The log column only where a run needs it in the markdown table; json and csv always have it.
  bool any_unfinished = false;
  for (const RunRecord* r : runs) any_unfinished = any_unfinished || !finished_ok(*r);
  const bool log_column = !human || any_unfinished;
  if (log_column) t.add_column("log");
  const std::string g_spec = fmt::format("{{:.{}g}}", o.digits);
  for (const Group& g : groups) {
    auto lead = [&](std::vector<Cell>& row) {
      if (several_sweeps) row.emplace_back(g.sweep.empty() ? "-" : std::filesystem::path(g.sweep).filename().string());
      for (const std::string& v : g.values) row.emplace_back(v);
    };
    std::vector<const RunRecord*> ok, other;
    for (const RunRecord* r : g.runs) (finished_ok(*r) ? ok : other).push_back(r);
    if (!ok.empty()) {
      std::vector<Cell> row;
      lead(row);
      std::vector<int64_t> seeds;
      for (const RunRecord* r : ok) seeds.push_back(r->seed);
      row.emplace_back(seed_ranges(seeds));
      if (!human) row.emplace_back(double(ok.size()));
      for (const std::string& m : o.metrics) {
        std::vector<double> x;
        for (const RunRecord* r : ok)
          if (auto v = figure(*r, m)) x.push_back(*v);
        const MeanSd s = mean_sd(x);
        if (human) {
          std::string cell = x.empty() ? "-" : fmt::format(fmt::runtime(g_spec), s.mean);
          if (x.size() > 1) cell += " ± " + fmt::format(fmt::runtime(g_spec), s.sd);
          if (!x.empty() && x.size() < ok.size()) cell += fmt::format(" ({} of {})", x.size(), ok.size());
          row.emplace_back(cell);
        } else {
          row.emplace_back(s.mean);
          row.emplace_back(s.sd);
        }
      }
      row.emplace_back("ok");
      if (log_column) row.emplace_back("");
      t.add_row(std::move(row));
    }
    for (const RunRecord* r : other) {
      std::vector<Cell> row;
      lead(row);
      row.emplace_back(r->id.empty() ? "-" : std::to_string(r->seed));
      if (!human) row.emplace_back(0.0);
      for (size_t m = 0; m < o.metrics.size(); ++m) {
        if (human) {
          row.emplace_back("-");
        } else {
          row.emplace_back(std::numeric_limits<double>::quiet_NaN());
          row.emplace_back(std::numeric_limits<double>::quiet_NaN());
        }
      }
      row.emplace_back(unfinished_state(*r) + progress_of(*r, o.metrics));
      // A run that never started has no log yet.
      if (log_column)
        row.emplace_back(r->status.state == RunState::not_started ? std::string("-")
                                                                  : (std::filesystem::path(r->dir) / kRunLogFile).string());
      t.add_row(std::move(row));
    }
  }
  return t;
}

}  // namespace lava
