#include "report/paper_runs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "core/check.hpp"
#include "core/json_lines.hpp"
#include "core/read_file.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double number_in(const JsonValue& j, const std::string& key) {
  const JsonValue* v = j.find(key);
  return v && v->is_number() ? v->number() : kNaN;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") + 1 - a);
}

RunEvaluation read_evaluation(const std::string& path) {
  RunEvaluation e;
  e.file = path;
  std::optional<JsonValue> result;
  for (const JsonValue& j : read_json_lines(path)) {
    const JsonValue* event = j.find("event");
    if (!event) {
      result = j;
    } else if (event->is_string() && event->str() == "qtype") {
      e.qtypes.push_back(j);
    } else if (event->is_string() && event->str() == "subset") {
      e.subset = j;
    }
  }
  if (!result) throw input_error(path, 0, "no result row (a JSON line without \"event\", as lava eval --format json prints)");
  e.result = std::move(*result);
  return e;
}

}  // namespace

double RunEvaluation::figure(const std::string& key) const { return number_in(result, key); }
bool RunEvaluation::has(const std::string& key) const { return result.contains(key); }

const std::string* PaperRun::option(const std::string& key) const {
  for (const auto& [k, v] : config)
    if (k == key) return &v;
  return nullptr;
}

double PaperRun::done_figure(const std::string& key) const { return done ? number_in(*done, key) : kNaN; }

const JsonValue* PaperRun::best_epoch_line() const {
  for (auto e = epochs.rbegin(); e != epochs.rend(); ++e)
    if (const JsonValue* best = e->find("best"); best && best->kind() == JsonValue::Kind::boolean && best->boolean())
      return &*e;
  return nullptr;
}

std::string PaperRun::finished_stop() const {
  if (!done) return "";
  const JsonValue* stop = done->find("stop");
  if (!stop || !stop->is_string()) return "";
  const std::string& s = stop->str();
  return s == "patience" || s == "epochs" || s == "max-steps" || s == "nan" ? s : "";
}

namespace {

bool is_test(const RunEvaluation& e) {
  const JsonValue* split = e.result.find("split");
  return split && split->is_string() && split->str() == "test";
}

double kmax_of(const RunEvaluation& e) {
  const double k = e.figure("kmax");
  return std::isnan(k) ? 0 : k;  // an evaluation that does not say kmax is exact (VQA's has no K-max)
}

}  // namespace

const RunEvaluation* PaperRun::test_eval(bool with_bleu) const { return kmax_eval(0, with_bleu); }

const RunEvaluation* PaperRun::kmax_eval(int64_t k, bool with_bleu) const {
  const RunEvaluation* found = nullptr;
  for (const RunEvaluation& e : evals)
    if (is_test(e) && kmax_of(e) == double(k) && (!with_bleu || !std::isnan(e.figure("bleu")))) {
      // Of several that fit, the one with BLEU (the fuller evaluation).
      if (!found || (std::isnan(found->figure("bleu")) && !std::isnan(e.figure("bleu")))) found = &e;
    }
  return found;
}

std::vector<std::pair<std::string, std::string>> read_config_lines(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string text = read_file(path, kSettingsLimit);
  long line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = trim(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || trim(line.substr(0, eq)).empty())
      throw input_error(path, line_no, "not a \"key = value\" line");
    out.emplace_back(trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
  }
  return out;
}

std::vector<PaperRun> read_paper_runs(const std::vector<std::string>& run_dirs) {
  std::vector<PaperRun> runs;
  for (const std::string& dir : run_dirs) {
    PaperRun r;
    r.record = read_run_record(dir);
    if (!r.record.unreadable.empty()) throw InputError(r.record.unreadable);
    // Captioning and the sequence VAE have no row in the paper's tables.
    if (r.record.task != "nmt" && r.record.task != "vqa") continue;
    const std::string config = (fs::path(dir) / kRunConfigFile).string();
    r.config = read_config_lines(config);
    const std::string* attn = r.option("attn");
    if (!attn || attn->empty()) throw input_error(config, 0, "no attn: a paper table's row is its --attn variant");
    r.attn = *attn;
    const std::string metrics = (fs::path(dir) / kRunMetricsFile).string();
    if (fs::exists(metrics))
      for (const JsonValue& j : read_json_lines(metrics)) {
        const JsonValue* event = j.find("event");
        if (!event || !event->is_string()) continue;
        if (event->str() == "done") r.done = j;
        if (event->str() == "epoch") r.epochs.push_back(j);
      }
    const fs::path eval_dir = fs::path(dir) / kRunEvalDir;
    std::vector<std::string> files;
    std::error_code ec;
    // A run still training has no eval/ yet: no evaluations, not an error. Anything else that stops the listing is.
    const bool has_evals = fs::is_directory(eval_dir, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw input_error(eval_dir.string(), 0, "cannot list: " + ec.message());
    ec.clear();
    if (has_evals)
      for (const auto& e : fs::directory_iterator(eval_dir, ec))
        if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
    if (ec) throw input_error(eval_dir.string(), 0, "cannot list: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) r.evals.push_back(read_evaluation(f));
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace lava
