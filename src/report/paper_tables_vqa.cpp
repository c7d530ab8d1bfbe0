// VQA's Table 1, per question mix: every question, the single-region questions, and each question type.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/read_file.hpp"
#include "report/paper_figures.hpp"
#include "report/paper_tables.hpp"

namespace lava {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The line of an evaluation a view reads: "all" (the result row), "single_region" (the subset line) or a question
// type (its "qtype" line); nullptr when the evaluation has none.
const JsonValue* view_line(const RunEvaluation& e, const std::string& view) {
  if (view == "all") return &e.result;
  if (view == "single_region") return e.subset ? &*e.subset : nullptr;
  for (const JsonValue& q : e.qtypes)
    if (const JsonValue* t = q.find("qtype"); t && t->is_string() && t->str() == view) return &q;
  return nullptr;
}

// KEY × scale of every run's test evaluation in `view`. Each value is rounded to 10 significant digits first, as the
// experiment scripts' tables did, so that the figures are theirs to the last printed digit.
SeedStat view_stat(const std::vector<const PaperRun*>& runs, const std::string& view, const std::string& key, double scale = 1) {
  std::vector<double> x;
  for (const PaperRun* r : runs) {
    const RunEvaluation* e = r->test_eval();
    const JsonValue* line = e ? view_line(*e, view) : nullptr;
    const JsonValue* v = line ? line->find(key) : nullptr;
    if (!v || !v->is_number()) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", scale * v->number());
    x.push_back(std::strtod(buf, nullptr));
  }
  return seed_stat(x);
}

// The first run (in row order) whose evaluation has `view`'s line.
const JsonValue* first_view_line(const RunGroup& g, const std::string& view) {
  for (const std::string& attn : g.variants())
    for (const PaperRun* r : g.runs_of(attn))
      if (const RunEvaluation* e = r->test_eval())
        if (const JsonValue* line = view_line(*e, view)) return line;
  return nullptr;
}

std::string text_of(const JsonValue* line, const char* key) {
  const JsonValue* v = line ? line->find(key) : nullptr;
  if (!v) return "–";
  return v->is_string() ? v->str() : format_figure(v->number(), "%.0f");
}

// "patience ×2, epochs ×1": the stops of the finished runs, by name.
std::string stops_of(const std::vector<const PaperRun*>& runs) {
  std::map<std::string, int> n;
  for (const PaperRun* r : runs)
    if (const std::string s = r->finished_stop(); !s.empty()) ++n[s];
  std::string out;
  for (const auto& [s, k] : n) out += fmt::format("{}{} ×{}", out.empty() ? "" : ", ", s, k);
  return out;
}

SeedStat finished_stat(const std::vector<const PaperRun*>& runs, const std::string& key) {
  std::vector<double> x;
  for (const PaperRun* r : runs)
    if (!r->finished_stop().empty()) x.push_back(r->done_figure(key));
  return seed_stat(x);
}

// The data set's answer-only baselines from its meta.tsv, when the data is where the runs' options say (relative to
// the sweep file's folder, as the runs trained): "" when it is not here.
std::string baselines(const RunGroup& g) {
  if (g.runs.empty() || g.data.empty()) return "";
  namespace fs = std::filesystem;
  fs::path meta = fs::path(g.data) / "meta.tsv";
  if (meta.is_relative()) meta = fs::path(g.runs.front()->record.sweep).parent_path() / meta;
  std::error_code ec;
  if (!fs::is_regular_file(meta, ec)) return "";
  std::map<std::string, double> v;
  const std::string text = read_file(meta.string(), kSettingsLimit);
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) v[line.substr(0, tab)] = std::strtod(line.c_str() + tab + 1, nullptr);
  }
  if (!v.count("test_majority_accuracy") || !v.count("test_question_only_oracle")) return "";
  return fmt::format("Answer-only baselines (meta.tsv): majority answer {:.1f}%, question-only oracle {:.1f}%.",
                     100 * v["test_majority_accuracy"], 100 * v["test_question_only_oracle"]);
}

ReportCell paper_vqa(const PaperRow* p, const char* key, double PaperRow::*field) {
  return paper_cell(key, p ? p->*field : kNaN);
}

// The cells a question view's row shares in every VQA table: NLL, the paper's NLL, accuracy (%), the paper's VQA
// score, −ELBO and the KL gap, each mean ± sd over the runs' evaluations of that view.
void add_view_cells(std::vector<ReportCell>& row, const std::vector<const PaperRun*>& runs, const std::string& view,
                    const PaperRow* p) {
  row.push_back(stat_cell("nll", view_stat(runs, view, "nll"), "%.3f"));
  row.push_back(paper_vqa(p, "nll", &PaperRow::vqa_nll));
  row.push_back(stat_cell("accuracy", view_stat(runs, view, "accuracy", 100), "%.2f"));
  row.push_back(paper_vqa(p, "eval", &PaperRow::vqa_eval));
  row.push_back(stat_cell("neg_elbo", view_stat(runs, view, "elbo", -1), "%.3f"));
  row.push_back(stat_cell("kl_gap", view_stat(runs, view, "kl_gap"), "%.4f"));
}

void add_mix(ReportDocument& doc, const RunGroup& g) {
  const std::vector<std::string> variants = g.variants();
  const JsonValue* all = first_view_line(g, "all");
  const std::string n_test = text_of(all, "questions");
  doc.text(fmt::format("## Mix `{}`: {} test questions", g.label, n_test));
  if (const std::string b = baselines(g); !b.empty()) doc.text(b);
  doc.text("### All questions");
  ReportTable t;
  t.name = "vqa-table1";
  for (const char* h : {"Model", "Objective", "E"}) t.add_column(h, false);
  for (const char* h : {"NLL", "paper NLL", "Acc", "paper Eval", "−ELBO", "KL gap", "H(prior)"}) t.add_column(h, true);
  t.add_column("stop", false);
  for (const char* h : {"epoch", "update", "best epoch", "train time", "seeds ok"}) t.add_column(h, true);
  for (const std::string& attn : variants) {
    const std::vector<const PaperRun*> runs = g.runs_of(attn);
    const PaperRow* p = g.paper->of(attn);
    std::vector<ReportCell> row;
    row.push_back(text_cell("model", p ? p->model : attn));
    row.push_back(text_cell("objective", p ? p->objective : ""));
    row.push_back(text_cell("estimator", p ? p->estimator : ""));
    row.front().json.emplace_back("attn", JsonValue(attn));
    row.front().json.emplace_back("mix", JsonValue(g.label));
    add_view_cells(row, runs, "all", p);
    row.push_back(stat_cell("entropy", view_stat(runs, "all", "entropy"), "%.2f"));
    row.push_back(text_cell("stop", stops_of(runs)));
    row.push_back(stat_cell("epochs", finished_stat(runs, "epochs"), "%.1f"));
    row.push_back(stat_cell("steps", finished_stat(runs, "steps"), "%.0f"));
    row.push_back(stat_cell("best_epoch", finished_stat(runs, "best_epoch"), "%.1f"));
    row.push_back(train_time_cell(finished_stat(runs, "seconds")));
    size_t ok = 0;
    for (const PaperRun* r : runs) ok += r->test_eval() != nullptr;
    row.push_back(ReportCell{fmt::format("{}/{}", ok, runs.size()),
                             {{"seeds_ok", JsonValue(int64_t(ok))}, {"seeds", JsonValue(int64_t(runs.size()))}}});
    t.rows.push_back(std::move(row));
  }
  doc.table(std::move(t));

  const JsonValue* subset = first_view_line(g, "single_region");
  std::string types = text_of(subset, "qtype");
  for (char& c : types)
    if (c == '+') c = ' ';
  doc.text(fmt::format("### Single-region questions ({}: {} of {})", subset ? types : "none",
                       subset ? text_of(subset, "questions") : "0", n_test));
  ReportTable s;
  s.name = "vqa-single-region";
  s.add_column("Model", false);
  for (const char* h : {"NLL", "paper NLL (all)", "Acc", "paper Eval (all)", "−ELBO", "KL gap", "region acc of the posterior"})
    s.add_column(h, true);
  for (const std::string& attn : variants) {
    const std::vector<const PaperRun*> runs = g.runs_of(attn);
    const PaperRow* p = g.paper->of(attn);
    std::vector<ReportCell> row;
    row.push_back(text_cell("model", p ? p->model : attn));
    row.front().json.emplace_back("attn", JsonValue(attn));
    row.front().json.emplace_back("mix", JsonValue(g.label));
    add_view_cells(row, runs, "single_region", p);
    row.push_back(stat_cell("region_acc_posterior", view_stat(runs, "single_region", "region_acc_posterior"), "%.3f"));
    s.rows.push_back(std::move(row));
  }
  doc.table(std::move(s));

  doc.text("### By question type: accuracy % (NLL)");
  ReportTable q;
  q.name = "vqa-qtype";
  q.add_column("qtype", false);
  q.add_column("subset", false);
  q.add_column("questions", true);
  for (const std::string& attn : variants) q.add_column(attn, true);
  // The question types of the first evaluation, in its order.
  std::vector<std::string> qtypes;
  for (const std::string& attn : variants) {
    for (const PaperRun* r : g.runs_of(attn))
      if (const RunEvaluation* e = r->test_eval(); e && qtypes.empty())
        for (const JsonValue& line : e->qtypes) qtypes.push_back(text_of(&line, "qtype"));
  }
  for (const std::string& type : qtypes) {
    const JsonValue* first = first_view_line(g, type);
    std::vector<ReportCell> row;
    row.push_back(text_cell("qtype", type));
    row.front().json.emplace_back("mix", JsonValue(g.label));
    row.push_back(text_cell("subset", text_of(first, "subset")));
    const JsonValue* questions = first ? first->find("questions") : nullptr;
    row.push_back(ReportCell{text_of(first, "questions"), {{"questions", questions ? *questions : JsonValue()}}});
    for (const std::string& attn : variants) {
      const std::vector<const PaperRun*> runs = g.runs_of(attn);
      const ReportCell acc = stat_cell(attn + "_accuracy", view_stat(runs, type, "accuracy", 100), "%.1f");
      const ReportCell nll = stat_cell(attn + "_nll", view_stat(runs, type, "nll"), "%.3f");
      ReportCell c{acc.text + " (" + nll.text + ")", acc.json};
      c.json.insert(c.json.end(), nll.json.begin(), nll.json.end());
      row.push_back(std::move(c));
    }
    q.rows.push_back(std::move(row));
  }
  std::vector<ReportCell> paper{text_cell("qtype", "paper, all questions (VQA 2.0)"), text_cell("", ""), text_cell("", "")};
  paper.front().json.emplace_back("mix", JsonValue(g.label));
  for (const std::string& attn : variants) {
    const PaperRow* p = g.paper->of(attn);
    const ReportCell e = paper_vqa(p, "eval", &PaperRow::vqa_eval), n = paper_vqa(p, "nll", &PaperRow::vqa_nll);
    paper.push_back(ReportCell{e.text + " (" + n.text + ")",
                               {{attn + "_paper_eval", e.json[0].second}, {attn + "_paper_nll", n.json[0].second}}});
  }
  q.rows.push_back(std::move(paper));
  doc.table(std::move(q));
}

}  // namespace

void add_vqa_tables(ReportDocument& doc, const PaperGroups& g) {
  if (g.vqa.empty()) return;
  doc.text("## Table 1: VQA (scenes of Fashion-MNIST items)");
  doc.text(
      "Seeds: mean ± sd over the runs of a row where there are several (seeds ok: the runs with a test evaluation, of\n"
      "the row's runs).\n"
      "NLL: the exact marginal −log Σ_i p(z=i) f_i(y) per question (direct for soft). Acc: answer accuracy (%); the\n"
      "paper's VQA Eval column is the VQA score, which needs several annotators' answers that scenes do not have.\n"
      "−ELBO: q = p for the variants without q (the Jensen bound); KL gap = log p − ELBO. The paper's figures are VQA\n"
      "2.0 over all questions (src/method.md §6), given beside every view. Stop: why and where each run stopped (epoch\n"
      "and update of the stop, the epoch whose model was kept).");
  for (const RunGroup& mix : g.vqa) add_mix(doc, mix);
}

}  // namespace lava
