// The paper tables' pictures: the learning curves of every row (validation PPL per epoch for translation, validation
// NLL per question for each VQA mix) and test PPL against K-max's K, each from the first seed of a row, drawn as
// `lava plot` draws them (report/svg.hpp).
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "report/paper_tables.hpp"
#include "report/svg.hpp"

namespace lava {

namespace {

// The y values above this are left out of the translation curves, and counted in the y label: a sampled likelihood
// (a continuous latent's importance-sampled estimate) before its q has trained can be astronomically large (1e224 at
// epoch 1) and would flatten the rest.
constexpr double kMaxCurvePpl = 100;

// Epoch -> key over a run's epoch lines; points above y_max are counted in `above`.
Series curve(const std::string& name, const PaperRun& r, const std::string& key, double y_max, size_t& above) {
  Series s;
  s.name = name;
  for (const JsonValue& e : r.epochs) {
    const JsonValue* x = e.find("epoch");
    const JsonValue* y = e.find(key);
    if (!x || !y || !x->is_number() || !y->is_number() || !std::isfinite(y->number())) continue;
    if (y->number() > y_max) {
      ++above;
      continue;
    }
    s.x.push_back(x->number()), s.y.push_back(y->number());
  }
  return s;
}

std::string above_note(size_t above, double y_max) {
  return above ? fmt::format(" ({} point{} above {} not shown)", above, above == 1 ? "" : "s", y_max) : "";
}

bool any_point(const std::vector<Series>& series) {
  for (const Series& s : series)
    if (!s.x.empty()) return true;
  return false;
}

}  // namespace

std::vector<std::string> write_paper_plots(const std::string& dir, const PaperGroups& g) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::vector<std::string> written;
  auto write = [&](const std::string& name, const std::string& title, const std::string& x_label,
                   const std::string& y_label, const std::vector<Series>& series) {
    if (!any_point(series)) return;
    const std::string path = (fs::path(dir) / name).string();
    write_line_plot(path, title, x_label, y_label, series);
    written.push_back(path);
  };

  std::vector<Series> nmt, kmax;
  size_t above = 0;
  std::string sampled;  // the rows whose likelihood is an importance-sampled estimate, as their evaluation says
  for (const std::string& attn : g.nmt.variants()) {
    const PaperRun& first = *g.nmt.runs_of(attn).front();
    nmt.push_back(curve(attn, first, "valid_ppl", kMaxCurvePpl, above));
    if (const RunEvaluation* e = first.test_eval())
      if (const JsonValue* kind = e->result.find("likelihood"); kind && kind->is_string() && kind->str() == "sampled")
        sampled += (sampled.empty() ? "" : ", ") + attn;
    // PPL against K: every K-max evaluation of the first seed, by K (K = 0, exact attention, is not a K).
    std::map<double, double> by_k;
    for (const RunEvaluation& e : first.evals) {
      const double k = e.figure("kmax"), ppl = e.figure("ppl");
      if (!std::isnan(k) && k > 0 && std::isfinite(ppl)) by_k[k] = ppl;
    }
    if (by_k.empty()) continue;
    Series s;
    s.name = attn;
    for (const auto& [k, ppl] : by_k) s.x.push_back(k), s.y.push_back(ppl);
    kmax.push_back(std::move(s));
  }
  write("nmt-curves.svg", "Translation: validation PPL per epoch, every row (first seed)", "epoch",
        "validation PPL (exact" + (sampled.empty() ? "" : "; " + sampled + ": sampled") + ")" +
            above_note(above, kMaxCurvePpl),
        nmt);
  write("kmax.svg", "Translation: test PPL against K (first seed), the paper's Table 2 right",
        "K (K-max attention under the prior)", "test PPL", kmax);
  for (const RunGroup& mix : g.vqa) {
    std::vector<Series> vqa;
    size_t none = 0;
    for (const std::string& attn : mix.variants())
      vqa.push_back(curve(attn, *mix.runs_of(attn).front(), "valid_nll", HUGE_VAL, none));
    write("vqa-curves-" + mix.label + ".svg",
          "VQA (" + mix.label + " mix): validation NLL per epoch, every row (first seed)", "epoch",
          "validation NLL per question", vqa);
  }
  return written;
}

}  // namespace lava
