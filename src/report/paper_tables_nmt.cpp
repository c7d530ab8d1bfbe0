// The translation tables: Table 1 with where and why each run stopped, Table 2 (exact against K-max) and Table 3
// (inference alternatives, prior entropy).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "report/paper_figures.hpp"
#include "report/paper_tables.hpp"

namespace lava {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double paper_or_nan(const PaperRow* p, double PaperRow::*field) { return p ? p->*field : kNaN; }

// The paper's "Model | Objective | E" cells of a row (the variant's name alone when the paper has no such row), E
// followed by e_suffix.
void lead_cells(std::vector<ReportCell>& row, const PaperRow* p, const std::string& attn, const std::string& e_suffix) {
  row.push_back(text_cell("model", p ? p->model : attn));
  row.push_back(text_cell("objective", p ? p->objective : ""));
  row.push_back(text_cell("estimator", std::string(p ? p->estimator : "") + e_suffix));
}

ReportCell attn_cell(const std::string& attn) { return ReportCell{"`" + attn + "`", {{"attn", JsonValue(attn)}}}; }

// The test figure `key` of each run (exact attention, the evaluation with BLEU when there is one).
SeedStat test_stat(const std::vector<const PaperRun*>& runs, const std::string& key) {
  std::vector<double> x;
  for (const PaperRun* r : runs)
    if (const RunEvaluation* e = r->test_eval()) x.push_back(e->figure(key));
  return seed_stat(x);
}

SeedStat done_stat(const std::vector<const PaperRun*>& runs, const std::string& key) {
  std::vector<double> x;
  for (const PaperRun* r : runs) x.push_back(r->done_figure(key));
  return seed_stat(x);
}

// "finished/planned": the runs with a test evaluation, of the row's runs.
ReportCell seeds_cell(size_t finished, size_t planned) {
  return ReportCell{fmt::format("{}/{}", finished, planned),
                    {{"seeds_ok", JsonValue(int64_t(finished))}, {"seeds", JsonValue(int64_t(planned))}}};
}

size_t with_test_eval(const std::vector<const PaperRun*>& runs) {
  size_t n = 0;
  for (const PaperRun* r : runs) n += r->test_eval() != nullptr;
  return n;
}

void add_table1(ReportDocument& doc, const RunGroup& g) {
  ReportTable t;
  t.name = "nmt-table1";
  for (const char* h : {"Model", "Objective", "E", "`--attn`"}) t.add_column(h, false);
  for (const char* h : {"PPL", "paper PPL", "BLEU", "paper BLEU", "ELBO", "KL", "KL gap", "Prior entropy", "Token acc.",
                        "Train time", "Steps"})
    t.add_column(h, true);
  for (const std::string& attn : g.variants()) {
    const std::vector<const PaperRun*> runs = g.runs_of(attn);
    const PaperRow* p = g.paper->of(attn);
    std::string nan;
    for (const PaperRun* r : runs)
      if (const JsonValue* v = r->done ? r->done->find("nan") : nullptr; v && v->kind() == JsonValue::Kind::boolean && v->boolean())
        nan += fmt::format(" (NaN in training, seed {})", r->record.seed);
    std::vector<ReportCell> row;
    lead_cells(row, p, attn, nan);
    row.push_back(attn_cell(attn));
    row.push_back(stat_cell("ppl", test_stat(runs, "ppl"), "%.2f"));
    row.push_back(paper_cell("ppl", paper_or_nan(p, &PaperRow::nmt_ppl)));
    row.push_back(stat_cell("bleu", test_stat(runs, "bleu"), "%.2f"));
    row.push_back(paper_cell("bleu", paper_or_nan(p, &PaperRow::nmt_bleu)));
    row.push_back(stat_cell("elbo", test_stat(runs, "elbo"), "%.3f"));
    row.push_back(stat_cell("kl", test_stat(runs, "kl"), "%.3f"));
    row.push_back(stat_cell("kl_gap", test_stat(runs, "kl_gap"), "%.4f"));
    row.push_back(stat_cell("entropy", test_stat(runs, "entropy"), "%.2f"));
    row.push_back(stat_cell("accuracy", test_stat(runs, "accuracy"), "%.3f"));
    row.push_back(train_time_cell(done_stat(runs, "seconds")));
    row.push_back(stat_cell("steps", done_stat(runs, "steps"), "%.0f"));
    t.rows.push_back(std::move(row));
  }
  doc.table(std::move(t));
}

// One row per run: how far it got, why it stopped, its best epoch and the time it took.
void add_stops(ReportDocument& doc, const RunGroup& g) {
  doc.text(
      "Where and why each run stopped (patience: 2 epoch ends in a row without a better validation bound; epochs:\n"
      "the whole --epochs budget; max-steps / max-minutes: a budget of updates or minutes, so not converged; a run\n"
      "not finished shows how far it got and its best validation so far):");
  ReportTable t;
  t.name = "nmt-runs";
  t.add_column("`--attn`", false);
  t.add_column("seed", true);
  t.add_column("epochs", true);
  t.add_column("updates", true);
  t.add_column("stopped by", false);
  for (const char* h : {"best epoch", "best valid PPL", "train time"}) t.add_column(h, true);
  for (const std::string& attn : g.variants())
    for (const PaperRun* r : g.runs_of(attn)) {
      // The done line, else the last epoch line (how far it got); the line with the best epoch and its PPL: the
      // done line, else the best epoch so far.
      const JsonValue* line = r->done ? &*r->done : r->epochs.empty() ? nullptr : &r->epochs.back();
      const JsonValue* best = r->done ? line : r->best_epoch_line();
      std::string stop = "not finished";
      if (r->done) {
        const JsonValue* s = line->find("stop");
        stop = s && s->is_string() ? s->str() : "";
      } else if (!line && r->record.status.state == RunState::not_started) {
        stop = "not started";  // a run stopped in its first epoch has no epoch line yet, but is not finished
      }
      auto figure_in = [](const JsonValue* in, const char* key) {
        const JsonValue* v = in ? in->find(key) : nullptr;
        return v && v->is_number() ? v->number() : kNaN;
      };
      auto figure = [&](const char* key) { return figure_in(line, key); };
      // A done line says "epochs", an epoch line "epoch".
      const double epochs = std::isnan(figure("epochs")) ? figure("epoch") : figure("epochs");
      std::vector<ReportCell> row;
      row.push_back(attn_cell(attn));
      row.push_back(ReportCell{std::to_string(r->record.seed), {{"seed", JsonValue(r->record.seed)}}});
      row.push_back(number_cell("epochs", epochs, "%.0f"));
      row.push_back(number_cell("steps", figure("steps"), "%.0f"));
      row.push_back(text_cell("stop", stop));
      row.push_back(number_cell("best_epoch", figure_in(best, r->done ? "best_epoch" : "epoch"), "%.4g"));
      row.push_back(number_cell("valid_ppl", figure_in(best, "valid_ppl"), "%.2f"));
      const double seconds = figure("seconds");
      row.push_back(ReportCell{format_run_time(seconds), {{"train_seconds", std::isnan(seconds) ? JsonValue() : JsonValue(seconds)}}});
      t.rows.push_back(std::move(row));
    }
  doc.table(std::move(t));
}

std::string data_of(const RunGroup& g) { return g.data.empty() ? "the runs' data" : "`" + g.data + "`"; }

void add_table1_notes(ReportDocument& doc, const RunGroup& g) {
  double tokens = kNaN, beam = kNaN;
  for (const std::string& attn : g.variants()) {
    for (const PaperRun* r : g.runs_of(attn))
      if (const RunEvaluation* e = r->test_eval()) {
        tokens = e->figure("tokens"), beam = e->figure("beam");
        break;
      }
    if (!std::isnan(tokens)) break;
  }
  doc.text(fmt::format(
      "Test split of {} ({} target tokens, </s> included as scored by lava eval), beam {}; mean ± sd over the seeds in "
      "the runs table. PPL is the exact marginal under the prior; ELBO, KL = KL(q‖p) and KL gap = log p − ELBO are "
      "nats per target token (variants without q: ELBO at q = p). The paper's figures are IWSLT14 with BPE at the "
      "paper's model size (src/method.md §6): compare orderings, not values. Train time (mean over seeds) includes the "
      "validations. Each run's settings are in its config.ini.",
      data_of(g), format_figure(tokens, "%.0f"), format_figure(beam, "%.0f")));
}

// Table 2's K: the K-max evaluation with BLEU of the first run that has one (0 when none has).
int64_t table2_k(const RunGroup& g) {
  for (const PaperRun* r : g.runs)
    for (const RunEvaluation& e : r->evals) {
      // A whole K within reason: K is a count of source positions.
      const double k = e.figure("kmax");
      if (k > 0 && k < 1e9 && k == std::floor(k) && !std::isnan(e.figure("bleu"))) return int64_t(k);
    }
  return 0;
}

void add_table2(ReportDocument& doc, const RunGroup& g, int64_t k) {
  doc.text(fmt::format("## Table 2: exact against K-max attention (K = {}), the same models", k));
  ReportTable t;
  t.name = "nmt-table2";
  for (const char* h : {"Model", "E", "`--attn`"}) t.add_column(h, false);
  for (const char* h : {"PPL exact", "PPL K-max", "paper exact / K-max", "BLEU exact", "BLEU K-max",
                        "paper exact / K-max", "seeds"})
    t.add_column(h, true);
  double beam = kNaN;
  for (const std::string& attn : g.variants()) {
    const PaperRow* p = g.paper->of(attn);
    const std::vector<const PaperRun*> runs = g.runs_of(attn);
    // Both columns of a row average the same models: the seeds with a K-max evaluation.
    std::vector<double> ppl, ppl_k, bleu, bleu_k;
    size_t with_k = 0;
    for (const PaperRun* r : runs) {
      const RunEvaluation* ek = r->kmax_eval(k, true);
      if (!ek) continue;
      ++with_k;
      if (std::isnan(beam)) beam = ek->figure("beam");
      const RunEvaluation* e = r->test_eval();
      ppl.push_back(e ? e->figure("ppl") : kNaN), bleu.push_back(e ? e->figure("bleu") : kNaN);
      ppl_k.push_back(ek->figure("ppl")), bleu_k.push_back(ek->figure("bleu"));
    }
    const bool paper_has = p && !std::isnan(p->nmt_ppl_kmax);
    if (!paper_has && with_k == 0) continue;
    std::vector<ReportCell> row;
    row.push_back(text_cell("model", p ? p->model : attn));
    row.push_back(text_cell("estimator", p ? p->estimator : ""));
    row.push_back(attn_cell(attn));
    row.push_back(stat_cell("ppl", seed_stat(ppl), "%.2f"));
    row.push_back(stat_cell("ppl_kmax", seed_stat(ppl_k), "%.2f"));
    row.push_back(ReportCell{format_figure(paper_or_nan(p, &PaperRow::nmt_ppl), "%.2f") + " / " +
                                 format_figure(paper_or_nan(p, &PaperRow::nmt_ppl_kmax), "%.2f"),
                             {}});
    for (const auto& [key, field] : {std::pair{"paper_ppl", &PaperRow::nmt_ppl}, {"paper_ppl_kmax", &PaperRow::nmt_ppl_kmax}}) {
      const double x = paper_or_nan(p, field);
      row.back().json.emplace_back(key, std::isnan(x) ? JsonValue() : JsonValue(x));
    }
    row.push_back(stat_cell("bleu", seed_stat(bleu), "%.2f"));
    row.push_back(stat_cell("bleu_kmax", seed_stat(bleu_k), "%.2f"));
    row.push_back(ReportCell{format_figure(paper_or_nan(p, &PaperRow::nmt_bleu), "%.2f") + " / " +
                                 format_figure(paper_or_nan(p, &PaperRow::nmt_bleu_kmax), "%.2f"),
                             {}});
    for (const auto& [key, field] : {std::pair{"paper_bleu", &PaperRow::nmt_bleu}, {"paper_bleu_kmax", &PaperRow::nmt_bleu_kmax}}) {
      const double x = paper_or_nan(p, field);
      row.back().json.emplace_back(key, std::isnan(x) ? JsonValue() : JsonValue(x));
    }
    row.push_back(seeds_cell(with_k, runs.size()));
    t.rows.push_back(std::move(row));
  }
  doc.table(std::move(t));
  doc.text(fmt::format(
      "K-max keeps the prior's K largest positions and renormalises (src/method.md §4.3); BLEU is beam {} on the test "
      "split. PPL against K = 1..10 (seed 1): kmax.svg. Seeds: those with a K-max evaluation, of those planned; both "
      "columns of a row average the same models.",
      format_figure(beam, "%.0f")));
}

// The first value of option `key` among the runs of `attn`, or "–".
std::string option_of(const RunGroup& g, const std::string& attn, const std::string& key) {
  for (const PaperRun* r : g.runs_of(attn))
    if (const std::string* v = r->option(key)) return *v;
  return "–";
}

// Table 3's text on the inference rows' settings: "ATTN NOTE, ATTN NOTE", each note's "{KEY}" replaced by the first
// value of option KEY among the row's runs (PaperRow::inference_note; "–" when none sets it); "" when no row with runs
// has a note. A row without runs has no settings to state.
std::string inference_notes(const RunGroup& g) {
  std::string out;
  for (const PaperVariantRow* r : g.paper->inference()) {
    const char* note = r->paper.inference_note;
    if (!note || g.runs_of(r->attn).empty()) continue;
    std::string text = note;
    for (size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open)) {
      const size_t close = text.find('}', open);
      if (close == std::string::npos) break;
      const std::string value = option_of(g, r->attn, text.substr(open + 1, close - open - 1));
      text.replace(open, close - open + 1, value);
      open += value.size();
    }
    out += (out.empty() ? "" : ", ") + r->attn + " " + text;
  }
  return out;
}

void add_table3(ReportDocument& doc, const PaperGroups& pg) {
  const RunGroup& g = pg.nmt;
  doc.text("## Table 3: inference alternatives and prior entropy");
  ReportTable t;
  t.name = "nmt-table3";
  t.add_column("Model", false);
  t.add_column("`--attn`", false);
  for (const char* h : {"PPL", "paper PPL", "BLEU", "paper BLEU", "KL(q‖p)", "seeds"}) t.add_column(h, true);
  for (const PaperVariantRow* inference : pg.nmt.paper->inference()) {
    const std::string& attn = inference->attn;
    const std::vector<const PaperRun*> runs = g.runs_of(attn);
    if (runs.empty()) continue;
    const PaperRow* p = &inference->paper;
    std::vector<ReportCell> row;
    row.push_back(text_cell("model", p ? p->model : attn));
    row.push_back(attn_cell(attn));
    row.push_back(stat_cell("ppl", test_stat(runs, "ppl"), "%.2f"));
    row.push_back(paper_cell("ppl", paper_or_nan(p, &PaperRow::nmt_ppl)));
    row.push_back(stat_cell("bleu", test_stat(runs, "bleu"), "%.2f"));
    row.push_back(paper_cell("bleu", paper_or_nan(p, &PaperRow::nmt_bleu)));
    row.push_back(stat_cell("kl", test_stat(runs, "kl"), "%.3f"));
    row.push_back(seeds_cell(with_test_eval(runs), runs.size()));
    t.rows.push_back(std::move(row));
  }
  doc.table(std::move(t));
  if (const std::string notes = inference_notes(g); !notes.empty())
    doc.text(notes + " (src/method.md §2, §2.2).");

  ReportTable e;
  e.name = "prior-entropy";
  e.add_column("Model", false);
  e.add_column("`--attn`", false);
  e.add_column("translation: prior entropy", true);
  e.add_column("paper", true);
  for (const RunGroup& mix : pg.vqa) e.add_column("VQA, " + mix.label + " mix", true);
  e.add_column("paper", true);
  for (const PaperVariantRow& row_of : pg.nmt.paper->all()) {
    const PaperRow& p = row_of.paper;
    const std::string& attn = row_of.attn;
    if (std::isnan(p.nmt_entropy)) continue;
    bool any = !g.runs_of(attn).empty();
    for (const RunGroup& mix : pg.vqa) any = any || !mix.runs_of(attn).empty();
    if (!any) continue;
    std::vector<ReportCell> row;
    row.push_back(text_cell("model", p.model));
    row.push_back(attn_cell(attn));
    row.push_back(stat_cell("nmt_entropy", test_stat(g.runs_of(attn), "entropy"), "%.2f"));
    row.push_back(paper_cell("nmt_entropy", p.nmt_entropy));
    for (const RunGroup& mix : pg.vqa)
      row.push_back(stat_cell("vqa_" + mix.label + "_entropy", test_stat(mix.runs_of(attn), "entropy"), "%.2f"));
    row.push_back(paper_cell("vqa_entropy", p.vqa_entropy));
    e.rows.push_back(std::move(row));
  }
  doc.table(std::move(e));
  doc.text(
      "Prior entropy: the mean entropy of p(z | x, y<j) over test target tokens (translation) and of p(z | x, q) over "
      "test questions (VQA), in nats; VQA has 9 regions (log 9 = 2.20), the paper's VQA up to 100 (log 100 = 4.61).");
}

}  // namespace

void add_translation_tables(ReportDocument& doc, const PaperGroups& g) {
  if (!g.nmt.runs.empty()) {
    doc.text("## Table 1: translation (gettext German-English)");
    add_table1(doc, g.nmt);
    add_stops(doc, g.nmt);
    add_table1_notes(doc, g.nmt);
    const int64_t k = table2_k(g.nmt);
    if (k > 0) add_table2(doc, g.nmt, k);
  }
  add_table3(doc, g);
}

}  // namespace lava
