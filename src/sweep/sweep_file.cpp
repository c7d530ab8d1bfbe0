#include "sweep/sweep_file.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"
#include "sweep/sweep_sections.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

using Kind = SweepSectionKind;

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

// Options every evaluation gets from its run, each with the reason an [eval] section may not set it.
const std::map<std::string, std::string>& eval_options_set_by_sweep() {
  static const std::map<std::string, std::string> m = {
      {"model", "an evaluation reads its run's model"},
      {"task", "an evaluation has its run's task"},
      {"format", "evaluations write JSON lines"},
      {"config", "the evaluation's config is written by the sweep"},
      {"help", "not an option to sweep"},
      {"quiet", "evaluations are quiet; their notes go to RUN/eval/NAME.log"},
      {"plot", "every run would draw into the same directory"},
  };
  return m;
}

std::string names_of(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Sets o in `options`: replaces the value (and line) of an option of that key already there, else appends it.
void set_option(std::vector<SweepOption>& options, const SweepOption& o) {
  for (SweepOption& x : options)
    if (x.key == o.key) {
      x = o;
      return;
    }
  options.push_back(o);
}

void set_grid(std::vector<SweepGrid>& grid, const SweepGrid& g) {
  for (SweepGrid& x : grid)
    if (x.key == g.key) {
      x = g;
      return;
    }
  grid.push_back(g);
}

const SweepGrid* find_grid(const std::vector<SweepGrid>& grid, const std::string& key) {
  for (const SweepGrid& g : grid)
    if (g.key == key) return &g;
  return nullptr;
}

// Every option of every section is one the task's lava train (lava eval in [eval] sections) knows and not one the
// sweep sets itself; every [KEY VALUE] and only.KEY names a grid key and values of it (at some scale).
void check_sections(const std::string& path, const std::string& task, const std::vector<SweepSection>& sections,
                    const TrainOptionNames& train_options, const EvalOptionNames& eval_options) {
  std::set<std::string> train_known, eval_known;
  try {
    train_known = train_options(task);
  } catch (const UsageError& e) {  // not a task
    throw input_error(path, sections.front().task_line, e.what());
  }
  std::map<std::string, std::set<std::string>> grid_values;  // over the top and every scale
  std::set<std::string> scales;
  for (const SweepSection& s : sections) {
    if (s.kind == Kind::scale) scales.insert(s.scale);
    if (s.kind == Kind::top || s.kind == Kind::scale)
      for (const SweepGrid& g : s.grid) grid_values[g.key].insert(g.values.begin(), g.values.end());
  }
  for (const SweepSection& s : sections) {
    if (!s.scale.empty() && !scales.count(s.scale))
      throw input_error(path, s.line, fmt::format("section {}: unknown scale {} (no [scale {}] section)", quote_input(s.header),
                                                  quote_input(s.scale), s.scale));
    if (s.kind == Kind::row) {
      auto it = grid_values.find(s.key);
      if (it == grid_values.end())
        throw input_error(path, s.line, fmt::format("unknown section {}: {} is no grid key of this file (grid.{} = ...)",
                                                    quote_input(s.header), quote_input(s.key, '"'), s.key));
      if (!it->second.count(s.value))
        throw input_error(path, s.line, fmt::format("section {}: no grid.{} lists {}", quote_input(s.header), s.key,
                                                    quote_input(s.value, '"')));
    }
    const bool eval = s.kind == Kind::eval;
    if (eval && eval_known.empty()) {
      if (!eval_options) throw input_error(path, s.line, "evaluations are not available here");
      eval_known = eval_options(task);
    }
    for (const SweepOption& o : s.options) {
      const auto& refused = eval ? eval_options_set_by_sweep() : options_set_by_sweep();
      if (auto it = refused.find(o.key); it != refused.end())
        throw input_error(path, o.line, fmt::format("{} is set by the sweep for each {} ({})", quote_input(o.key, '"'),
                                                    eval ? "evaluation" : "run", it->second));
      if (!(eval ? eval_known : train_known).count(o.key))
        throw input_error(path, o.line, fmt::format("unknown option {} for lava {} --task {}", quote_input(o.key, '"'),
                                                    eval ? "eval" : "train", task));
    }
    for (const SweepGrid& g : s.grid) {
      if (eval) {
        auto it = grid_values.find(g.key);
        if (it == grid_values.end())
          throw input_error(path, g.line, fmt::format("only.{}: {} is no grid key of this file", g.key, quote_input(g.key, '"')));
        for (const std::string& v : g.values)
          if (!it->second.count(v))
            throw input_error(path, g.line, fmt::format("only.{}: no grid.{} lists {}", g.key, g.key, quote_input(v, '"')));
        continue;
      }
      if (auto it = options_set_by_sweep().find(g.key); it != options_set_by_sweep().end())
        throw input_error(path, g.line, fmt::format("{} is set by the sweep for each run ({})", quote_input(g.key, '"'), it->second));
      if (g.key != kSweepLabelKey && !train_known.count(g.key))
        throw input_error(path, g.line, fmt::format("unknown option {} for lava train --task {}", quote_input(g.key, '"'), task));
    }
  }
}

// The sections that apply at `scale`, of `kind`, grouped by what they select ([attn X] and [scale S, attn X] are
// one group, the unscaled first), in the order their first section appears.
std::vector<std::vector<const SweepSection*>> groups(const std::vector<SweepSection>& sections, Kind kind,
                                                     const std::string& scale) {
  std::vector<std::vector<const SweepSection*>> out;
  for (const SweepSection& s : sections) {
    if (s.kind != kind || (!s.scale.empty() && s.scale != scale)) continue;
    auto same = [&](const std::vector<const SweepSection*>& g) {
      return g.front()->key == s.key && g.front()->value == s.value && g.front()->eval == s.eval;
    };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) {
      out.push_back({&s});
    } else {
      it->push_back(&s);
      std::stable_sort(it->begin(), it->end(), [](auto* a, auto* b) { return a->scale.empty() && !b->scale.empty(); });
    }
  }
  return out;
}

// Applies the chosen scale's section and collects the overrides and evaluations that hold at it.
void resolve_scale(SweepFile& f, const std::vector<SweepSection>& sections, std::string& out) {
  for (const SweepSection& s : sections) {
    if (s.kind != Kind::scale || s.scale != f.scale) continue;
    for (const SweepGrid& g : s.grid) {
      std::erase_if(f.fixed, [&](const SweepOption& o) { return o.key == g.key; });  // the scale grids it
      set_grid(f.grid, g);
    }
    for (const SweepOption& o : s.options) {
      if (const SweepGrid* g = find_grid(f.grid, o.key))
        throw input_error(f.path, o.line, fmt::format("{} is a grid key (line {}): a scale sets either one value or the grid",
                                                      quote_input(o.key, '"'), g->line));
      set_option(f.fixed, o);
    }
    if (s.seeds) f.seeds = *s.seeds;
    if (!s.out.empty()) out = s.out;
  }
  for (const auto& group : groups(sections, Kind::row, f.scale)) {
    const SweepSection& first = *group.front();
    const SweepGrid* g = find_grid(f.grid, first.key);
    if (!g || std::find(g->values.begin(), g->values.end(), first.value) == g->values.end()) continue;  // not at this scale
    SweepOverride o{first.key, first.value, {}, std::nullopt, first.line, 0};
    for (const SweepSection* s : group) {
      for (const SweepOption& opt : s->options) {
        if (const SweepGrid* gk = find_grid(f.grid, opt.key))
          throw input_error(f.path, opt.line, fmt::format("{} is a grid key (line {}): a row cannot set it",
                                                          quote_input(opt.key, '"'), gk->line));
        set_option(o.options, opt);
      }
      if (s->seeds) o.seeds = s->seeds, o.seeds_line = s->seeds_line;
    }
    f.overrides.push_back(std::move(o));
  }
  for (const auto& group : groups(sections, Kind::eval, f.scale)) {
    SweepEval e{group.front()->eval, {}, {}, group.front()->line};
    for (const SweepSection* s : group) {
      for (const SweepOption& opt : s->options) set_option(e.options, opt);
      for (const SweepGrid& g : s->grid) set_grid(e.only, g);
    }
    for (const SweepGrid& g : e.only)
      if (!find_grid(f.grid, g.key))
        throw input_error(f.path, g.line, fmt::format("only.{}: {} is no grid key at scale {}", g.key,
                                                      quote_input(g.key, '"'), f.scale));
    f.evals.push_back(std::move(e));
  }
}

}  // namespace

bool option_changes_results(const std::string& key) { return key != "threads" && key != "logits-cache-mb"; }

SweepFile parse_sweep_file(const std::string& path, const std::string& text, const TrainOptionNames& options,
                           const std::string& scale, const EvalOptionNames& eval_options) {
  SweepFile f;
  f.path = fs::absolute(path).lexically_normal().string();
  f.dir = fs::path(f.path).parent_path().string();
  const std::vector<SweepSection> sections = read_sweep_sections(path, text);
  const SweepSection& top = sections.front();
  if (top.task_line) f.task = top.task;
  check_sections(path, f.task, sections, options, eval_options);
  f.fixed = top.options;
  f.grid = top.grid;
  if (top.seeds) f.seeds = *top.seeds;
  std::string out = top.out;
  for (const SweepSection& s : sections)
    if (s.kind == Kind::scale) f.scales.push_back(s.scale);
  if (!top.default_scale.empty() && std::find(f.scales.begin(), f.scales.end(), top.default_scale) == f.scales.end())
    throw input_error(path, top.default_scale_line, fmt::format("scale: no [scale {}] section{}", top.default_scale,
                                                                f.scales.empty() ? "" : " (" + names_of(f.scales) + ")"));
  f.scale = scale.empty() ? top.default_scale : scale;
  if (f.scales.empty() && !f.scale.empty())
    throw input_error(path, 0, fmt::format("--scale {}: this file has no [scale NAME] sections", f.scale));
  if (!f.scales.empty() && f.scale.empty())
    throw input_error(path, 0, fmt::format("choose a scale with --scale NAME ({}), or name a default with scale = NAME",
                                           names_of(f.scales)));
  if (!f.scale.empty() && std::find(f.scales.begin(), f.scales.end(), f.scale) == f.scales.end()) {
    // Named at the file's first [scale] section: the list of scales starts there.
    const auto first = std::find_if(sections.begin(), sections.end(), [](const SweepSection& s) { return s.kind == Kind::scale; });
    throw input_error(path, first->line, fmt::format("--scale {}: unknown scale (the file has [scale {}])", quote_input(f.scale),
                                                     names_of(f.scales)));
  }
  resolve_scale(f, sections, out);
  const fs::path stem = fs::path(f.path).filename().replace_extension("");
  const std::string default_out = stem.string() + (f.scale.empty() ? "" : "-" + f.scale) + ".runs";
  f.out = (fs::path(f.dir) / (out.empty() ? default_out : out)).lexically_normal().string();
  return f;
}

void apply_sweep_settings(SweepFile& f, const std::vector<std::string>& settings, const TrainOptionNames& options) {
  if (settings.empty()) return;
  const std::set<std::string> known = options(f.task);
  for (const std::string& s : settings) {
    const size_t eq = s.find('=');
    const auto fail = [&](const std::string& why) {
      throw UsageError(fmt::format("lava sweep: --set {}: {}", quote_input(s), why));
    };
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) fail("not KEY=VALUE");
    const SweepOption o{s.substr(0, eq), s.substr(eq + 1), 0};
    if (o.key == "out") {
      f.out = (fs::path(f.dir) / o.value).lexically_normal().string();
    } else {
      if (auto it = options_set_by_sweep().find(o.key); it != options_set_by_sweep().end())
        fail(fmt::format("{} is set by the sweep for each run ({})", quote_input(o.key, '"'), it->second));
      if (!known.count(o.key))
        fail(fmt::format("unknown option {} for lava train --task {} (KEY is one of its options, or out)",
                         quote_input(o.key, '"'), f.task));
      if (const SweepGrid* g = find_grid(f.grid, o.key))
        fail(fmt::format("{} is a grid key of {} (line {}), not one value", quote_input(o.key, '"'), f.path, g->line));
      set_option(f.fixed, o);
      for (SweepOverride& row : f.overrides) std::erase_if(row.options, [&](const SweepOption& x) { return x.key == o.key; });
    }
    f.set.push_back(o);
  }
}

SweepFile read_sweep_file(const std::string& path, const TrainOptionNames& options, const std::string& scale,
                          const EvalOptionNames& eval_options) {
  return parse_sweep_file(path, read_file(path, kSettingsLimit), options, scale, eval_options);
}

}  // namespace lava
