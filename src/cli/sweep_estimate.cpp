#include "cli/sweep_estimate.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli/eval_examples.hpp"
#include "cli/task_registry.hpp"
#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "sweep/self_executable.hpp"

namespace lava {

RunBudget run_budget(const SweepFile& f, const SweepRun& r) {
  const TaskCommands& t = task_registry().find(f.task);
  std::unique_ptr<CommandLine> cl = t.train_command_line();
  cl->options().add_options()("task", po::value<std::string>(), "the run's task");
  // The run's options go through a config file, exactly as `lava sweep exec` hands them to lava train (so that
  // switches and values are read the same way).
  std::string path = (std::filesystem::temp_directory_path() / "lava-budget-XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw InputError("cannot create a temporary file in " + std::filesystem::temp_directory_path().string());
  ::close(fd);
  struct Remove {
    const std::string& p;
    ~Remove() { std::filesystem::remove(p); }
  } remove{path};
  write_file_atomic(path, run_config_text(r));
  std::vector<std::string> args = {"train", "--config", path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  LAVA_CHECK(cl->parse(int(argv.size()), argv.data()), "a run's options asked for --help");
  RunBudget b;
  b.epochs = int(cl->get_int("epochs", 0, 1 << 30));
  b.max_steps = cl->get_int("max-steps", 0, INT64_MAX);
  b.patience = int(cl->get_int("patience", 0, 1 << 30));
  b.valid_every = cl->get_int("valid-every", 0, INT64_MAX);
  if (cl->vm().count("warm-start")) b.warm_start = cl->get_int("warm-start", 0, INT64_MAX);
  return b;
}

void add_estimate_options(CommandLine& cl) {
  cl.options().add_options()  //
      ("estimate", po::bool_switch(), "time a few updates of each distinct model shape here and print each run's "
                                      "expected core-hours and the table's")  //
      ("estimate-steps", po::value<std::string>()->default_value("100"),
       "updates of the longer timing run (the shorter makes a quarter of them)")  //
      ("estimate-examples", po::value<std::string>()->default_value("256"),
       "examples of an evaluation's longer timing run (the shorter evaluates a quarter of them)")  //
      ("expected-epochs", po::value<std::string>(),
       "cost runs that stop on patience at this many epochs (default: their --epochs, an upper bound)");
}

std::optional<SweepEstimate> estimate_if_asked(const CommandLine& cl, const SweepFile& f,
                                               const std::vector<SweepRun>& runs) {
  if (!cl.vm()["estimate"].as<bool>()) return std::nullopt;
  EstimateOptions o;
  o.lava = self_executable();
  o.steps = cl.get_int("estimate-steps", 8, 1000000);
  if (cl.has("expected-epochs")) o.expected_epochs = int(cl.get_int("expected-epochs", 1, 100000));
  o.eval_examples = cl.get_int("estimate-examples", 2, 1000000);
  return estimate_sweep(f, runs, [&](const SweepRun& r) { return run_budget(f, r); }, eval_examples, o);
}

Table estimate_table(const SweepFile& f, const std::vector<SweepRun>& runs, const SweepEstimate& est) {
  Table t;
  t.add_column("index").add_column("id").add_column("seed");
  for (const SweepGrid& g : f.grid) t.add_column(g.key);
  t.add_column("shape").add_column("updates").add_column("updates_from").add_column("validations");
  bool warm_start = false;
  for (size_t i = 0; i < runs.size(); ++i) warm_start = warm_start || est.runs[i].warm_start > 0;
  t.add_column("update_s", ".4f");
  if (warm_start) t.add_column("warm_start").add_column("warm_update_s", ".4f");
  t.add_column("validation_s", ".2f").add_column("core_hours", ".3f");
  t.add_column("evals").add_column("eval_model").add_column("eval_core_hours", ".3f").add_column("total_core_hours", ".3f");
  for (size_t i = 0; i < runs.size(); ++i) {
    const SweepRun& r = runs[i];
    const RunEstimate& e = est.runs[i];
    const StepCost& c = est.shapes[e.shape];
    std::vector<Cell> row{Cell(r.index), Cell(r.id), Cell::integer(r.seed)};
    for (const auto& kv : r.grid) row.emplace_back(kv.second);
    row.emplace_back(int64_t(e.shape + 1));
    row.emplace_back(Cell::integer(e.length.updates));
    row.emplace_back(e.length.basis);
    row.emplace_back(Cell::integer(e.length.validations));
    row.emplace_back(c.update_s);
    if (warm_start) {
      row.emplace_back(Cell::integer(e.warm_start));
      row.emplace_back(est.warm[e.shape].update_s);
    }
    row.emplace_back(c.validation_s);
    row.emplace_back(e.core_hours);
    row.emplace_back(int64_t(r.evals.size()));
    row.emplace_back(r.evals.empty() ? "" : est.evals_on_trained[e.shape] ? "trained" : "timing");
    row.emplace_back(e.eval_core_hours);
    row.emplace_back(e.total_core_hours());
    t.add_row(std::move(row));
  }
  std::vector<Cell> total{Cell(""), Cell("total"), Cell("")};
  for (size_t g = 0; g < f.grid.size(); ++g) total.emplace_back("");
  total.emplace_back(int64_t(est.shapes.size()));
  for (int k = 0; k < (warm_start ? 7 : 5); ++k) total.emplace_back("");
  total.emplace_back(est.core_hours);
  total.emplace_back("");
  total.emplace_back("");
  total.emplace_back(est.eval_core_hours);
  total.emplace_back(est.total_core_hours());
  t.add_row(std::move(total));
  return t;
}

}  // namespace lava
