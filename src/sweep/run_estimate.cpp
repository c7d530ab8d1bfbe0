#include "sweep/run_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "report/run_record.hpp"

namespace lava {

namespace fs = std::filesystem;

int64_t updates_per_epoch(int64_t examples, int64_t batch) {
  LAVA_CHECK(examples >= 0 && batch > 0, "updates_per_epoch({}, {})", examples, batch);
  return (examples + batch - 1) / batch;
}

int64_t batches_from_position(int64_t steps, double position) {
  // A first epoch of B batches after n of them sits at position n / B, 0 < n / B <= 1.
  if (!(steps > 0 && position > 0 && position <= 1))
    throw InputError(fmt::format("a timing run of {} updates reported epoch position {}, not in (0, 1]", steps, position));
  return int64_t(std::llround(double(steps) / position));
}

ExpectedLength expected_length(const RunBudget& b, int64_t bpe, int expected_epochs) {
  LAVA_CHECK(bpe > 0 && b.epochs >= 0, "expected_length: {} batches an epoch, {} epochs", bpe, b.epochs);
  ExpectedLength e;
  const int64_t budget = int64_t(b.epochs) * bpe;
  if (b.max_steps > 0 && b.max_steps < budget) {
    e.updates = b.max_steps, e.basis = "max-steps";
  } else if (b.patience > 0 && expected_epochs > 0 && expected_epochs < b.epochs) {
    e.updates = int64_t(expected_epochs) * bpe, e.basis = "expected-epochs (patience)";
  } else {
    e.updates = budget, e.basis = b.patience > 0 ? "epochs (patience: upper bound)" : "epochs";
  }
  // A validation at every epoch end, one where max-steps stops inside an epoch, and one every valid_every updates
  // inside an epoch (the loop skips those that fall on an epoch's end).
  e.validations = e.updates / bpe + (e.updates % bpe != 0 ? 1 : 0);
  if (b.valid_every > 0) {
    const int64_t full = e.updates / bpe;
    int64_t inside = 0;
    for (int64_t ep = 0; ep <= full && ep * bpe < e.updates; ++ep) {
      const int64_t first = ep * bpe, last = std::min(e.updates, (ep + 1) * bpe);  // updates (first, last]
      inside += (last - 1) / b.valid_every - first / b.valid_every;  // multiples of valid_every before the end
    }
    e.validations += inside;
  }
  return e;
}

std::string cost_shape_key(const SweepRun& r) {
  static const std::set<std::string> kCostNeutral = {
      "seed",     "lr",       "lr-decay", "start-decay-at", "epochs", "max-steps", "max-minutes", "patience",
      "init",     "clip",     "checkpoint-every", "plot",   "threads", "logits-cache-mb", "valid-every"};
  std::vector<std::string> lines;
  for (const auto& [k, v] : r.options)
    if (!kCostNeutral.count(k)) lines.push_back(k + "=" + v + "\n");
  std::sort(lines.begin(), lines.end());
  std::string key;
  for (const std::string& l : lines) key += l;
  return key;
}

std::vector<size_t> group_by_shape(const std::vector<SweepRun>& runs) {
  std::map<std::string, size_t> index;
  std::vector<size_t> shape;
  for (const SweepRun& r : runs) shape.push_back(index.try_emplace(cost_shape_key(r), index.size()).first->second);
  return shape;
}

StepCost step_cost(const TrainTiming& a, const TrainTiming& b, const TrainTiming& v) {
  if (b.steps <= a.steps)
    throw InputError(fmt::format("an epoch is {} updates, too few to time an update (timing runs of {} and {})",
                                 b.steps, a.steps, b.steps));
  StepCost c;
  const double dn = double(b.steps - a.steps);
  // Noise on a loaded machine can make a difference negative; an update costs something, so floor it at 0.
  c.update_s = std::max(0.0, (b.cpu_seconds - a.cpu_seconds) / dn);
  c.update_wall_s = std::max(0.0, (b.loop_seconds - a.loop_seconds) / dn);
  if (v.steps != b.steps || v.validations <= b.validations)
    throw InputError(fmt::format("the validating timing run made {} updates and {} validations, not {} and more than {}",
                                 v.steps, v.validations, b.steps, b.validations));
  c.validation_s = std::max(0.0, (v.cpu_seconds - b.cpu_seconds) / double(v.validations - b.validations));
  c.batches_per_epoch = batches_from_position(b.steps, b.epoch_position);
  return c;
}

double run_core_seconds(const ExpectedLength& e, int64_t warm_start, const StepCost& main, const StepCost& warm) {
  const int64_t warm_updates = std::min(std::max<int64_t>(0, warm_start), e.updates);
  return double(warm_updates) * warm.update_s + double(e.updates - warm_updates) * main.update_s +
         double(e.validations) * main.validation_s;
}

namespace {

// A scratch directory for the timing runs, removed when done.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "lava-estimate-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw InputError("cannot create a scratch directory for the timing runs in " +
                                                  quote_input(fs::temp_directory_path().string()));
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::vector<std::pair<std::string, std::string>> timing_options(const SweepRun& r, bool warm_phase,
                                                                int64_t valid_every = 0) {
  std::vector<std::pair<std::string, std::string>> o;
  for (const auto& [k, v] : r.options) {
    // The timing run stops by its own --max-steps, validates only there, writes no checkpoints or pictures, and
    // saves into its scratch directory.
    static const std::set<std::string> kTimingSets = {"max-steps", "max-minutes", "checkpoint-every", "valid-every",
                                                      "plot",      "threads",     "save",             "resume"};
    if (kTimingSets.count(k)) continue;
    if (k == "epochs") continue;  // one epoch at most: an epoch shorter than the timing ends it there
    if (k == "warm-start" && !warm_phase) {
      o.emplace_back(k, "0");
      continue;
    }
    o.emplace_back(k, v);
  }
  o.emplace_back("epochs", "1");
  if (valid_every > 0) o.emplace_back("valid-every", std::to_string(valid_every));
  return o;
}

std::string describe(const SweepRun& r) {
  std::string s;
  for (const auto& [k, v] : r.grid) s += k + "=" + v + " ";
  return s.empty() ? "run " + r.id : s.substr(0, s.size() - 1);
}

// Whether run r makes the evaluation `name` (its section applies to the run).
bool makes_eval(const SweepRun& r, const std::string& name) {
  return std::find(r.evals.begin(), r.evals.end(), name) != r.evals.end();
}

// The model shape s's evaluations are timed on: the first of its runs with a model of its own (trained, or in
// training: the best so far), else the one its training timing runs saved into `scratch`; and whether trained.
std::pair<std::string, bool> eval_model(const std::vector<SweepRun>& runs, const std::vector<size_t>& shape, size_t s,
                                        const std::string& scratch) {
  std::error_code ec;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string own = (fs::path(runs[i].dir) / kRunModelFile).string();
    if (shape[i] == s && fs::is_regular_file(own, ec)) return {own, true};
  }
  return {(fs::path(scratch) / kTimingModelFile).string(), false};
}

}  // namespace

SweepEstimate estimate_sweep(const SweepFile& f, const std::vector<SweepRun>& runs, const RunBudgetOf& budget_of,
                             const EvalExamplesOf& examples_of, const EstimateOptions& o) {
  LAVA_CHECK(o.steps >= 8, "estimate steps {}", o.steps);
  const std::vector<size_t> shape = group_by_shape(runs);
  const size_t n_shapes = shape.empty() ? 0 : *std::max_element(shape.begin(), shape.end()) + 1;
  std::vector<size_t> first(n_shapes, runs.size());  // the first run of each shape, the one timed
  std::vector<RunBudget> budget;
  for (size_t i = 0; i < runs.size(); ++i) {
    budget.push_back(budget_of(runs[i]));
    if (first[shape[i]] == runs.size()) first[shape[i]] = i;
  }
  ScratchDir scratch;
  TimedTrainSetup setup{o.lava, f.task, f.dir, scratch.path, o.threads};
  const int64_t n1 = o.steps / 4, n2 = o.steps;
  SweepEstimate est;
  std::vector<StepCost>& warm = est.warm;
  warm.resize(n_shapes);
  for (size_t s = 0; s < n_shapes; ++s) {
    const SweepRun& r = runs[first[s]];
    const int64_t w = budget[first[s]].warm_start;
    auto time_phase = [&](bool warm_phase) {
      std::fprintf(stderr,
                   "lava sweep --estimate: shape %zu of %zu (%s)%s: timing %lld and %lld updates, and %lld with a "
                   "validation every %lld\n",
                   s + 1, n_shapes, one_line(describe(r)).c_str(), warm_phase ? ", warm start" : "", (long long)n1,
                   (long long)n2, (long long)n2, (long long)n1);
      std::fflush(stderr);
      try {
        const TrainTiming a = time_train(setup, timing_options(r, warm_phase), n1);
        const TrainTiming b = time_train(setup, timing_options(r, warm_phase), n2);
        const TrainTiming v = time_train(setup, timing_options(r, warm_phase, n1), n2);
        return step_cost(a, b, v);
      } catch (const InputError& e) {
        throw input_error(f.path, 0, fmt::format("{} ({}): {}", describe(r), r.id, e.what()));
      }
    };
    est.shapes.push_back(time_phase(false));
    // The evaluations, before a warm phase's timing replaces the main phase's model.
    const auto [model, trained] = eval_model(runs, shape, s, scratch.path);
    est.evals_on_trained.push_back(trained);
    est.evals.push_back({});
    const EvalTimer timer = [&](const std::vector<std::string>& args) { return time_eval(setup, args); };
    for (const SweepEval& ev : f.evals) {
      bool made = false;
      for (size_t i = 0; i < runs.size(); ++i)
        made = made || (shape[i] == s && makes_eval(runs[i], ev.name));
      if (!made) continue;
      try {
        est.evals.back().push_back(time_evaluation(setup, f, r, ev, model, o.eval_examples, examples_of, timer));
      } catch (const InputError& e) {
        const std::string run = r.grid.empty() ? describe(r) : fmt::format("{} ({})", describe(r), r.id);
        throw input_error(f.path, ev.line, fmt::format("[eval {}] of {}: {}", ev.name, run, e.what()));
      }
    }
    // The warm phase is timed only when its updates fill the timing run (a shorter one is costed as the rest).
    warm[s] = w >= n2 ? time_phase(true) : est.shapes.back();
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    RunEstimate e;
    e.shape = shape[i];
    e.warm_start = budget[i].warm_start;
    const StepCost& c = est.shapes[e.shape];
    e.length = expected_length(budget[i], c.batches_per_epoch, o.expected_epochs);
    e.core_hours = run_core_seconds(e.length, budget[i].warm_start, c, warm[e.shape]) / 3600;
    for (const EvalCost& ev : est.evals[e.shape])
      if (makes_eval(runs[i], ev.name)) e.eval_core_hours += ev.core_seconds() / 3600;
    est.core_hours += e.core_hours;
    est.eval_core_hours += e.eval_core_hours;
    est.runs.push_back(std::move(e));
  }
  return est;
}

double longest_run_hours(const SweepEstimate& est) {
  double longest = 0;
  for (const RunEstimate& e : est.runs) longest = std::max(longest, e.total_core_hours());
  return longest;
}

std::string slurm_time_limit(double hours, double factor, double extra_minutes) {
  LAVA_CHECK(std::isfinite(hours) && hours >= 0 && factor > 0 && extra_minutes >= 0, "slurm_time_limit({}, {}, {})",
             hours, factor, extra_minutes);
  const int64_t minutes = std::max<int64_t>(1, int64_t(std::ceil(hours * factor * 60 + extra_minutes - 1e-9)));
  const int64_t days = minutes / (24 * 60), h = minutes / 60 % 24, m = minutes % 60;
  return days > 0 ? fmt::format("{}-{:02}:{:02}:00", days, h, m) : fmt::format("{:02}:{:02}:00", h, m);
}

}  // namespace lava
