// The paper's tables as one document: the runs grouped into tables, the compute they took, and the order of
// tables.md.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "report/paper_tables.hpp"

namespace lava {

std::vector<std::string> RunGroup::variants() const {
  std::vector<std::string> out;
  for (const PaperVariantRow& p : paper->all())
    if (!runs_of(p.attn).empty()) out.push_back(p.attn);
  std::set<std::string> others;
  for (const PaperRun* r : runs)
    if (!paper->of(r->attn)) others.insert(r->attn);
  out.insert(out.end(), others.begin(), others.end());
  return out;
}

std::vector<const PaperRun*> RunGroup::runs_of(const std::string& attn) const {
  std::vector<const PaperRun*> out;
  for (const PaperRun* r : runs)
    if (r->attn == attn) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const PaperRun* a, const PaperRun* b) { return a->record.seed < b->record.seed; });
  return out;
}

namespace {

// A VQA mix's name: its data folder's name without the "scenes-" of `lava data scenes --out data/scenes-MIX`.
std::string mix_label(const std::string& data) {
  std::string name = std::filesystem::path(data).filename().string();
  if (name.empty()) name = std::filesystem::path(data).parent_path().filename().string();
  if (name.rfind("scenes-", 0) == 0) name = name.substr(7);
  return name.empty() ? "vqa" : name;
}

// Two runs of one variant and seed in one table would count one row's seed twice.
void refuse_repeated_seeds(const RunGroup& g) {
  std::map<std::pair<std::string, int64_t>, const PaperRun*> seen;
  for (const PaperRun* r : g.runs) {
    const auto [it, fresh] = seen.emplace(std::pair{r->attn, r->record.seed}, r);
    if (!fresh)
      throw InputError(fmt::format("{} and {} are both --attn {} seed {} of one table: report one of them",
                                   quote_input(it->second->record.dir), quote_input(r->record.dir), r->attn,
                                   r->record.seed));
  }
}

}  // namespace

PaperGroups group_paper_runs(const std::vector<PaperRun>& runs, const PaperRows& paper) {
  PaperGroups g;
  g.nmt.paper = &paper;
  std::map<std::string, RunGroup> mixes;
  for (const PaperRun& r : runs) {
    const std::string* data = r.option("data");
    if (r.record.task == "nmt") {
      g.nmt.label = "nmt";
      if (g.nmt.data.empty() && data) g.nmt.data = *data;
      g.nmt.runs.push_back(&r);
    } else if (r.record.task == "vqa") {
      const std::string label = mix_label(data ? *data : "");
      RunGroup& m = mixes[label];
      m.label = label;
      m.paper = &paper;
      if (m.data.empty() && data) m.data = *data;
      m.runs.push_back(&r);
    }
  }
  refuse_repeated_seeds(g.nmt);
  for (auto& [label, m] : mixes) {
    refuse_repeated_seeds(m);
    g.vqa.push_back(std::move(m));
  }
  return g;
}

void add_compute_table(ReportDocument& doc, const std::vector<PaperRun>& runs) {
  doc.text("## Compute");
  ReportTable t;
  t.name = "compute";
  t.add_column("task", false);
  for (const char* h : {"finished training runs", "updates", "training (run-hours)", "training (core-hours)",
                        "evaluations timed", "evaluation (run-hours)"})
    t.add_column(h, true);
  std::set<std::string> tasks;
  for (const PaperRun& r : runs) tasks.insert(r.record.task);
  for (const std::string& task : tasks) {
    int64_t finished = 0, evals = 0;
    double steps = 0, seconds = 0, cpu_seconds = 0, eval_seconds = 0;
    for (const PaperRun& r : runs) {
      if (r.record.task != task) continue;
      for (const RunEvaluation& e : r.evals)
        if (const double s = e.figure("seconds"); !std::isnan(s)) ++evals, eval_seconds += s;
      if (r.finished_stop().empty()) continue;
      ++finished;
      steps += r.done_figure("steps");
      seconds += r.done_figure("seconds");
      cpu_seconds += r.done_figure("cpu_seconds");  // NaN, so "–", if a run trained before LAVA counted CPU time
    }
    t.rows.push_back({text_cell("task", task), ReportCell{std::to_string(finished), {{"runs", JsonValue(finished)}}},
                      number_cell("updates", steps, "%.0f"), number_cell("train_hours", seconds / 3600, "%.2f"),
                      number_cell("train_core_hours", cpu_seconds / 3600, "%.2f"),
                      ReportCell{std::to_string(evals), {{"evaluations_timed", JsonValue(evals)}}},
                      number_cell("eval_hours", eval_seconds / 3600, "%.2f")});
  }
  doc.table(std::move(t));
  doc.text(
      "Run-hours: each run's own wall time (its done line's seconds over all its sessions, validations included; an "
      "evaluation's when its result row says seconds); with several runs at a time the whole takes about their sum "
      "over that number. Times depend on the machine's load (a run sharing its core with another process reports "
      "the slower time), the figures above do not. Core-hours: the training processes' CPU time (user and system, "
      "every thread, over all sessions), what a cluster bills and `lava sweep plan --estimate` predicts; – when a "
      "run trained before LAVA recorded it.");
}

ReportDocument paper_tables(const std::vector<PaperRun>& runs, const PaperRows& paper) {
  const PaperGroups g = group_paper_runs(runs, paper);
  ReportDocument doc;
  doc.text("# The paper's tables, reproduced");
  doc.text(
      "Made by `lava report --tables paper` from the run folders (each run's options in its config.ini, its training "
      "log in metrics.jsonl, its evaluations in eval/).");
  add_translation_tables(doc, g);
  add_vqa_tables(doc, g);
  add_compute_table(doc, runs);
  return doc;
}

}  // namespace lava
