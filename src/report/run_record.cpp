#include "report/run_record.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/json_lines.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"

namespace lava {

namespace fs = std::filesystem;

const char* to_string(RunState s) {
  switch (s) {
    case RunState::not_started: return "not started";
    case RunState::running: return "running";
    case RunState::finished: return "finished";
    case RunState::failed: return "failed";
    case RunState::stopped: return "stopped";
  }
  return "?";
}

namespace {

RunState parse_state(const JsonValue& v) {
  const std::string& s = v.str();
  for (RunState r : {RunState::running, RunState::finished, RunState::failed, RunState::stopped})
    if (s == to_string(r)) return r;
  throw input_error(v.file(), v.line(), "unknown run state \"" + s + "\"");
}

std::string path_in(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

}  // namespace

RunStatus read_run_status(const std::string& run_dir) {
  const std::string path = path_in(run_dir, kRunStatusFile);
  RunStatus s;
  if (!fs::exists(path)) return s;
  const JsonValue j = parse_json(read_file(path, kSettingsLimit), path);
  s.state = parse_state(j.at("state"));
  s.exit_code = int(j.at("exit").as_int());
  s.sessions = j.at("sessions").as_int();
  if (const JsonValue* v = j.find("signal")) s.signal = v->str();
  if (const JsonValue* v = j.find("host")) s.host = v->str();
  if (const JsonValue* v = j.find("slurm_job")) s.slurm_job = v->str();
  return s;
}

void write_run_status(const std::string& run_dir, const RunStatus& s) {
  JsonLine j;
  j.add("state", to_string(s.state)).add("exit", s.exit_code).add("sessions", s.sessions);
  if (!s.signal.empty()) j.add("signal", s.signal);
  j.add("host", s.host);
  if (!s.slurm_job.empty()) j.add("slurm_job", s.slurm_job);
  write_file_atomic(path_in(run_dir, kRunStatusFile), j.str() + "\n");
}

namespace {

// metrics.jsonl: the last "done" line, the last epoch line with "best": true before it, and the last epoch line.
void read_summary(const std::string& path, RunRecord& r) {
  if (!fs::exists(path)) return;
  std::optional<JsonValue> best_epoch, done;
  for (const JsonValue& j : read_json_lines(path)) {
    const JsonValue* event = j.find("event");
    if (!event || !event->is_string()) continue;
    if (event->str() == "epoch") {
      r.last_epoch = j;
      const JsonValue* best = j.find("best");
      if (best && best->kind() == JsonValue::Kind::boolean && best->boolean()) best_epoch = j;
    } else if (event->str() == "done") {
      done = j;
    }
  }
  if (!done) return;
  JsonValue merged = *done;
  if (best_epoch)
    for (const auto& [k, v] : best_epoch->members())
      if (!merged.contains(k)) merged.set(k, v);
  if (const JsonValue* nan = merged.find("nan"); nan && nan->kind() == JsonValue::Kind::boolean) r.nan = nan->boolean();
  r.summary = std::move(merged);
}

// eval/NAME.jsonl: the result row of each, by NAME: its last line without "event", or with "event": "eval" (the
// sequence VAE's). lava sweep renames an evaluation's file into place when it succeeds, so a file without one is
// damaged, not unfinished.
void read_eval_rows(const std::string& dir, RunRecord& r) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  if (ec) throw input_error(dir, 0, "cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::optional<JsonValue> result;
    for (const JsonValue& j : read_json_lines(f.string())) {
      const JsonValue* event = j.find("event");
      if (!event || (event->is_string() && event->str() == "eval")) result = j;
    }
    if (!result) throw input_error(f.string(), 0, "no result row (a JSON line without \"event\", or with \"event\": \"eval\", as lava eval prints)");
    r.evals.emplace_back(f.stem().string(), std::move(*result));
  }
}

}  // namespace

RunRecord read_run_record(const std::string& run_dir) {
  RunRecord r;
  r.dir = run_dir;
  try {
    // Into a copy first: a run.json that fails halfway leaves no half of its fields behind.
    RunRecord info = r;
    const std::string info_path = path_in(run_dir, kRunInfoFile);
    const JsonValue j = parse_json(read_file(info_path, kSettingsLimit), info_path);
    info.id = j.at("id").str();
    info.index = j.at("index").as_int();
    info.sweep = j.at("sweep").str();
    info.task = j.at("task").str();
    info.seed = j.at("seed").as_int();
    for (const auto& [k, v] : j.at("grid").members()) info.grid.emplace_back(k, v.str());
    r = std::move(info);
    r.status = read_run_status(run_dir);
    read_summary(path_in(run_dir, kRunMetricsFile), r);
    read_eval_rows(path_in(run_dir, kRunEvalDir), r);
  } catch (const InputError& e) {
    r.unreadable = e.what();
  }
  return r;
}

namespace {

// The run directories at any depth under `dir` (not `dir` itself), sorted by path. A run's own directory is not
// searched further: its subdirectories (eval/, plots) hold no runs. Symlinked directories are not followed, so a
// link loop cannot make the walk endless.
std::vector<std::string> runs_below(const std::string& dir) {
  std::vector<std::string> runs;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    // directory_options::none: the iterator never descends through a symlink, and a run reached through one is
    // not listed (its target is listed where it lies, if it lies below DIR).
    if (it->is_symlink(ec) || !it->is_directory(ec)) continue;
    if (fs::exists(it->path() / kRunInfoFile)) {
      runs.push_back(it->path().string());
      it.disable_recursion_pending();
    }
  }
  if (ec) throw input_error(dir, 0, "cannot list: " + ec.message());
  std::sort(runs.begin(), runs.end());
  return runs;
}

}  // namespace

std::vector<std::string> find_run_dirs(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  std::set<std::string> seen;  // real paths
  auto add = [&](const std::string& dir) {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(dir, ec);
    if (seen.insert(ec ? dir : real.string()).second) out.push_back(dir);
  };
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) throw input_error(d, 0, "not a directory");
    if (fs::exists(path_in(d, kRunInfoFile))) {
      add(d);
      continue;
    }
    const std::vector<std::string> runs = runs_below(d);
    if (runs.empty()) throw input_error(d, 0, std::string("no runs here (no ") + kRunInfoFile + " in it or below it)");
    for (const std::string& r : runs) add(r);
  }
  return out;
}

void refuse_duplicate_runs(const std::vector<RunRecord>& runs) {
  std::map<std::pair<std::string, std::string>, const RunRecord*> first;  // (sweep, id) -> its first run
  for (const RunRecord& r : runs) {
    if (r.id.empty()) continue;  // run.json unreadable: nothing to compare
    const auto [it, fresh] = first.emplace(std::pair{r.sweep, r.id}, &r);
    if (!fresh)
      throw InputError(fmt::format("{} and {} hold the same run ({} of {}), a copy of one another: report one of them",
                                   quote_input(it->second->dir), quote_input(r.dir), r.id, quote_input(r.sweep)));
  }
}

}  // namespace lava
