// lava sweep plan|run|slurm|exec FILE: a grid of training runs from a sweep file (sweep/sweep_file.hpp), planned as
// one command per run, run locally through GNU parallel, written as a Slurm job array, or run one at a time.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <filesystem>
#include <map>
#include <set>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/positional_args.hpp"
#include "cli/sweep_estimate.hpp"
#include "cli/task_registry.hpp"
#include "cli/variant_options.hpp"
#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/json.hpp"
#include "core/quote_input.hpp"
#include "report/run_record.hpp"
#include "sweep/gnu_parallel.hpp"
#include "sweep/lifeline.hpp"
#include "sweep/run_evals.hpp"
#include "sweep/run_exec.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep_plan.hpp"
#include "sweep/self_executable.hpp"

namespace lava {

namespace {

const char* kSweepAbout =
    "A sweep file is ini, like --config: fixed `lava train` options (key = value), grid lines such as\n"
    "`grid.attn = soft, marginal, var-enum` and `grid.lr = 1e-3, 3e-3`, `seeds = 1-3`, and optionally `task = T`\n"
    "(any task of lava train; nmt by default) and `out = DIR` (default: FILE minus .ini, plus .runs). It expands\n"
    "into the product of its grids times its seeds. Each run has a stable id (a hash of its options) and its own\n"
    "directory OUT/ID with the exact config.ini it trains with, its JSON lines (metrics.jsonl), its log (train.log)\n"
    "and its status; relative paths in the file are relative to the file's directory. `lava report OUT` merges\n"
    "the runs into one table.\n\n"
    "Sections after those lines (src/sweep/sweep_file.hpp has the whole syntax):\n"
    "  [scale NAME]             options, grids, seeds and out of one scale, chosen with --scale NAME (or the\n"
    "                           file's `scale = NAME`); a file with scales always runs at one\n"
    "  [KEY VALUE]              options and seeds of the runs whose grid KEY is VALUE, e.g. [attn var-dirichlet]\n"
    "                           with warm-start = 2122 and seeds = 1; [scale NAME, KEY VALUE] at one scale only\n"
    "  [eval NAME]              lava eval options (split = test, bleu = true, kmax = 5, ...; only.attn = a, b for\n"
    "                           some rows): run after training into OUT/ID/eval/NAME.jsonl, skipped once written,\n"
    "                           run again when stopped; evaluations do not change a run's id\n"
    "  grid.label = a, b        rows named by labels, not by one option's values: [label b] gives row b its\n"
    "                           options (attn = var-enum, warm-start = 1500); the label is in run.json, not in\n"
    "                           the run's options or id\n\n"
    "Every verb takes --set KEY=VALUE (repeatable) to change the file from the command line: KEY = VALUE in every\n"
    "run, over the file's lines at any scale and row (KEY a lava train option, not a grid key), or out = DIR, e.g.\n"
    "`--set data=/tmp/synth --set out=/tmp/runs`; VALUE reads as in the file. The commands a sweep writes (plan,\n"
    "run, the Slurm script) repeat it, so its runs have the ids of a file with those lines.\n\n"
    "  lava sweep plan FILE           one command per run (for GNU parallel, xargs or any scheduler)\n"
    "  lava sweep run FILE --jobs N   run them here through GNU parallel: finished runs are skipped, stopped\n"
    "                                 or killed ones resume from their resume state\n"
    "  lava sweep slurm FILE          write an sbatch job array script (one task per run, requeue-safe)\n"
    "  lava sweep exec FILE --run ID  one run (what the three above run)";

const char* kEstimateHelp =
    "--estimate times each distinct model shape of the sweep here (runs that differ only in seed, learning rate,\n"
    "stopping rules or other options that do not change the work of an update share one): lava train runs n/4\n"
    "and n updates (--estimate-steps n) at one thread, and n with a validation every n/4; differences in CPU time\n"
    "give one update's and one validation's cost, free of data loading. A run's training core-hours\n"
    "(core_hours) are its updates and its validations at those costs.\n"
    "Updates: --max-steps when set, else --epochs x batches an epoch; a run that stops on --patience is costed\n"
    "at --expected-epochs when given, else at its --epochs (an upper bound); the updates_from column says which.\n"
    "Each [eval NAME] section a shape's runs make (lava eval after training) runs with --limit n/4 and n\n"
    "(--estimate-examples n) at one thread (n grows 4x, up to the split, while the difference is below the\n"
    "shorter run's time); the difference in CPU time gives one example's cost, times the examples of its\n"
    "split as lava eval reads them (or its limit): eval_core_hours. The model evaluated is a\n"
    "run's own when one of the shape has a model.safetensors (eval_model \"trained\"), else the timing run's,\n"
    "trained a few updates (\"timing\"); decoding (--bleu) costs what its hypotheses' lengths cost, about a\n"
    "trained model's for a model that has learnt how long targets are, not a bound. total_core_hours is\n"
    "training and evaluations together.";

// One CommandLine per verb; `file` receives the sweep file (the one positional argument). Every verb takes
// --max-runs, as each of them expands the whole sweep.
bool parse_verb(CommandLine& cl, int argc, char** argv, std::string& file) {
  cl.options().add_options()("max-runs", po::value<std::string>()->default_value(std::to_string(kDefaultMaxRuns)),
                             "refuse a sweep of more runs than this (a guard against a grid typo)")  //
      ("scale", po::value<std::string>(), "the file's [scale NAME] to run (default: its scale = NAME)")  //
      ("set", po::value<std::vector<std::string>>()->composing(),
       "KEY=VALUE (repeatable): every run trains with lava train option KEY at VALUE, whatever the file says, "
       "or out=DIR; VALUE reads as in the file (a relative path is relative to its directory)");
  SplitArgs a = split_positional(argc, argv, {"--estimate"});
  std::vector<char*> v = argv_of(a.options);
  if (!cl.parse(int(a.options.size()), v.data())) return false;
  if (a.positional.size() != 1) cl.fail(a.positional.empty() ? "needs a sweep FILE" : "takes one sweep FILE, got " +
                                                                   std::to_string(a.positional.size()) + " words");
  file = a.positional[0];
  return true;
}

int64_t max_runs(const CommandLine& cl) { return cl.get_int("max-runs", 1, 100000000); }

// A run that sets a variant option its --attn does not read (or reads only under another option's value, as
// bam-weibull's --alpha-gamma), or gives one a bad value, would stop at lava train's usage error
// (cli/variant_options.hpp): the sweep refuses it before anything runs, naming the run. (A variant's own options
// belong in its [attn NAME] section.) Each run's config.ini text goes through the task's own training command line
// and read_variant_options, the very check lava train makes. A variant word lava train does not know, and the
// task's other options, are left to lava train's own errors.
void check_variant_options(const SweepFile& f, const std::vector<SweepRun>& runs) {
  const TaskCommands& task = task_registry().find(f.task);
  if (!train_option_names(task_registry(), f.task).count("attn")) return;  // a task without attention variants
  for (const SweepRun& r : runs) {
    const std::unique_ptr<CommandLine> cl = task_command_line(task_registry(), task, TaskVerb::train);
    AttnVariant attn;
    try {
      cl->parse_config_text(run_config_text(r), "run " + r.id);
      attn = parse_attn_variant(cl->get_string("attn"), f.task);
    } catch (const UsageError&) {
      continue;
    }
    VariantConfig variant;
    ObjectiveOptions objective;
    try {
      read_variant_options(*cl, attn, variant, objective);
    } catch (const UsageError& e) {
      const std::string prefix = "lava train: ", what = e.what();
      const std::string why = what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
      throw input_error(f.path, 0, "run " + r.id + ": " + why);
    }
  }
}

// The runs of f, each checked (check_variant_options).
std::vector<SweepRun> checked_runs(const SweepFile& f, int64_t max) {
  std::vector<SweepRun> runs = expand_sweep(f, max);
  check_variant_options(f, runs);
  return runs;
}

SweepFile load(const std::string& path, const CommandLine& cl) {
  const TrainOptionNames train_options = [](const std::string& task) { return train_option_names(task_registry(), task); };
  SweepFile f = read_sweep_file(path, train_options, cl.has("scale") ? cl.get_string("scale") : "",
                                [](const std::string& task) { return eval_option_names(task_registry(), task); });
  if (cl.has("set")) apply_sweep_settings(f, cl.vm()["set"].as<std::vector<std::string>>(), train_options);
  return f;
}

// One shell command; a newline in a path stays inside its quotes (GNU parallel gets the commands NUL-separated).
std::string exec_command(const std::string& lava, const SweepFile& f, const SweepRun& r, int threads, int64_t max_runs) {
  std::string c = shell_quote(lava) + " sweep exec " + shell_quote(f.path) + " --run " + r.id;
  if (!f.scale.empty()) c += " --scale " + shell_quote(f.scale);
  for (const SweepOption& o : f.set) c += " --set " + shell_quote(o.key + "=" + o.value);
  if (threads > 0) c += " --threads " + std::to_string(threads);
  if (max_runs != kDefaultMaxRuns) c += " --max-runs " + std::to_string(max_runs);
  return c;
}

int sweep_plan(int argc, char** argv) {
  CommandLine cl("sweep plan",
                 "lava sweep plan FILE [--scale S] [--threads T] [--format table|json|csv] [--estimate]",
                 std::string(kSweepAbout) +
                     "\n\nPrints one `lava sweep exec` command per run (--format table), or one JSON object per run\n"
                     "(index, id, seed, grid, evals, dir, command), or a csv table. With --threads T each command\n"
                     "passes --threads T to its run (results do not depend on it).\n\n" + kEstimateHelp);
  add_estimate_options(cl);
  std::string file;
  if (!parse_verb(cl, argc, argv, file)) return 0;
  const SweepFile f = load(file, cl);
  const std::vector<SweepRun> runs = checked_runs(f, max_runs(cl));
  if (const std::optional<SweepEstimate> est = estimate_if_asked(cl, f, runs)) {
    estimate_table(f, runs, *est).print(stdout, cl.common().format);
    return 0;
  }
  const std::string lava = self_executable();
  const int threads = cl.has("threads") ? cl.common().threads : 0;
  auto command = [&](const SweepRun& r) { return exec_command(lava, f, r, threads, max_runs(cl)); };
  if (cl.common().format == OutputFormat::table) {
    // One command a line: a quoted newline would split one, and whatever reads the lines would run its halves.
    std::vector<std::string> words{lava, f.path};
    for (const SweepOption& o : f.set) words.push_back(o.value);
    for (const std::string& path : words)
      if (path.find('\n') != std::string::npos)
        throw input_error(quote_input(path), 0, "a newline in this path cannot be printed as one command per line "
                                                "(use --format json, or lava sweep run, or a path without one)");
    for (const SweepRun& r : runs) std::printf("%s\n", command(r).c_str());
    return 0;
  }
  Table t;
  t.add_column("index").add_column("id").add_column("seed");
  for (const SweepGrid& g : f.grid) t.add_column(g.key);
  t.add_column("evals").add_column("dir").add_column("command");
  for (const SweepRun& r : runs) {
    std::vector<Cell> row{Cell(r.index), Cell(r.id), Cell::integer(r.seed)};
    for (const auto& kv : r.grid) row.emplace_back(kv.second);
    std::string evals;
    for (const std::string& e : r.evals) evals += (evals.empty() ? "" : " ") + e;
    row.emplace_back(evals);
    row.emplace_back(r.dir);
    row.emplace_back(command(r));
    t.add_row(std::move(row));
  }
  t.print(stdout, cl.common().format);
  return 0;
}

int sweep_run(int argc, char** argv) {
  CommandLine cl("sweep run", "lava sweep run FILE [--scale S] --jobs N [--threads T] [--sshlogin LOGINS]",
                 std::string(kSweepAbout) +
                     "\n\nRuns every unfinished run of FILE through GNU parallel, N at a time, with T threads each\n"
                     "(default: the cores over N, at least 1). Ctrl-C or SIGTERM stops the runs in progress, each with\n"
                     "its resume state saved; the same command then resumes them. Ends with a count of finished,\n"
                     "failed and stopped runs; exit 0 when all finished, 1 otherwise.");
  cl.options().add_options()                                                               //
      ("jobs,j", po::value<std::string>()->default_value("1"), "runs at a time")          //
      ("sshlogin", po::value<std::string>(), "GNU parallel --sshlogin: spread the runs over these machines "
                                             "(each must see the same paths and lava binary)");
  std::string file;
  if (!parse_verb(cl, argc, argv, file)) return 0;
  const int jobs = int(cl.get_int("jobs", 1, 4096));
  const SweepFile f = load(file, cl);
  const std::vector<SweepRun> runs = checked_runs(f, max_runs(cl));
  const long cores = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  const int threads = cl.has("threads") ? cl.common().threads : int(std::max(1L, cores / jobs));
  std::error_code ec;
  std::filesystem::create_directories(f.out, ec);
  if (ec) throw input_error(f.out, 0, "cannot create the runs directory: " + ec.message());
  const std::string lava = self_executable();
  std::vector<std::string> commands;
  size_t skipped = 0;
  for (const SweepRun& r : runs) {
    prepare_run_dir(f, r);  // lava report lists every run, as not started until it starts
    if (run_complete(r)) {
      ++skipped;
      continue;
    }
    commands.push_back(exec_command(lava, f, r, threads, max_runs(cl)));
  }
  std::fprintf(stderr, "lava sweep run: %zu runs, %zu finished before, %zu to run, %d at a time, %d threads each\n",
               runs.size(), skipped, commands.size(), jobs, threads);
  GnuParallelOptions po;
  po.jobs = jobs;
  po.joblog = (std::filesystem::path(f.out) / "parallel.joblog").string();
  if (cl.has("sshlogin")) po.sshlogin = cl.get_string("sshlogin");
  const int rc = commands.empty() ? 0 : run_with_gnu_parallel(commands, po);
  std::map<RunState, size_t> count;
  size_t unevaluated = 0;  // finished, with an evaluation missing
  for (const SweepRun& r : runs) {
    const RunState state = read_run_status(r.dir).state;
    const bool complete = state == RunState::finished && missing_evals(r).empty();
    unevaluated += state == RunState::finished && !complete;
    ++count[complete || state != RunState::finished ? state : RunState::not_started];
  }
  std::fprintf(stderr, "lava sweep run: %zu finished%s, %zu failed, %zu stopped, %zu not finished%s; lava report %s\n",
               count[RunState::finished], f.evals.empty() ? "" : " and evaluated", count[RunState::failed],
               count[RunState::stopped], count[RunState::running] + count[RunState::not_started] - unevaluated,
               unevaluated ? fmt::format(", {} trained with an evaluation missing", unevaluated).c_str() : "",
               quote_input(f.out).c_str());
  if (rc > 128 && rc < 128 + 64) return rc;  // stopped by a signal
  return count[RunState::finished] == runs.size() ? 0 : 1;
}

int sweep_slurm(int argc, char** argv) {
  CommandLine cl("sweep slurm", "lava sweep slurm FILE [--scale S] [--partition P] [--time T] [--cpus C] [--mem M] [options]",
                 std::string(kSweepAbout) +
                     "\n\nWrites an sbatch script for a job array with one task per run: logs OUT/slurm/%A_%a.out\n"
                     "(appended over requeues), --requeue, and --signal=B:TERM@60 so that a task near its time limit\n"
                     "saves its resume state. A task preempted or requeued (scontrol requeue) saves likewise and, back\n"
                     "in the queue, resumes from that state; a finished run's task exits at once. Submitting the script\n"
                     "again continues whatever did not finish.\n\n"
                     "The time limit: --time T when given; else, with --estimate, the longest run's expected hours at\n"
                     "one thread, training and evaluations (lava sweep plan --estimate: total_core_hours) x 1.5 plus\n"
                     "10 minutes, rounded up to the minute (more CPUs per task only shorten a run); else none (the\n"
                     "partition's default).\n\n" + kEstimateHelp);
  add_estimate_options(cl);
  cl.options().add_options()                                                                          //
      ("partition", po::value<std::string>(), "sbatch --partition")                                  //
      ("time", po::value<std::string>(), "time limit per task (sbatch --time, e.g. 02:00:00); overrides --estimate")  //
      ("cpus", po::value<std::string>()->default_value("1"), "CPUs per task; each run uses as many threads")  //
      ("mem", po::value<std::string>(), "memory per task (sbatch --mem, e.g. 4G)")                    //
      ("max-running", po::value<std::string>()->default_value("0"), "at most this many tasks at once (0 = no limit)")  //
      ("job-name", po::value<std::string>(), "sbatch --job-name (default: FILE's name)")             //
      ("lava", po::value<std::string>(), "the lava binary the tasks run (default: this one)")       //
      ("script", po::value<std::string>(), "where to write the script (default: OUT/sweep.sbatch)");
  std::string file;
  if (!parse_verb(cl, argc, argv, file)) return 0;
  SlurmOptions o;
  o.cpus = int(cl.get_int("cpus", 1, 4096));
  o.max_running = int(cl.get_int("max-running", 0, 1 << 30));
  for (const auto& [name, field] : {std::pair{"partition", &o.partition}, std::pair{"time", &o.time},
                                    std::pair{"mem", &o.mem}, std::pair{"job-name", &o.job_name}}) {
    if (!cl.has(name)) continue;
    *field = cl.get_string(name);
    if (!sbatch_safe(*field))
      cl.fail(std::string("--") + name + ": " + quote_input(*field) +
              " is empty or has a space, a control character, a quote, a backslash, $, ` or %");
  }
  o.lava = cl.has("lava") ? std::filesystem::absolute(cl.get_string("lava")).string() : self_executable();
  o.max_runs = max_runs(cl);
  const SweepFile f = load(file, cl);
  const std::vector<SweepRun> runs = checked_runs(f, o.max_runs);
  if (!cl.has("time"))
    if (const std::optional<SweepEstimate> est = estimate_if_asked(cl, f, runs)) {
      const double longest = longest_run_hours(*est);
      o.time = slurm_time_limit(longest, kSlurmTimeFactor, kSlurmTimeExtraMinutes);
      std::printf("time limit %s: the longest run's estimate, %.3f hours at one thread (training and evaluations), "
                  "x %g + %g min\n", o.time.c_str(), longest, kSlurmTimeFactor, kSlurmTimeExtraMinutes);
    }
  // Written (and every value in it checked) before any directory is made.
  const std::string text = slurm_array_script(f, runs, o);
  const std::string script = cl.has("script") ? cl.get_string("script") : (std::filesystem::path(f.out) / "sweep.sbatch").string();
  std::error_code ec;
  std::filesystem::create_directories(slurm_log_dir(f), ec);
  if (ec) throw input_error(slurm_log_dir(f), 0, "cannot create the log directory: " + ec.message());
  for (const SweepRun& r : runs) prepare_run_dir(f, r);
  write_file_atomic(script, text);
  std::filesystem::permissions(script, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add, ec);
  std::printf("wrote %s: %zu tasks; submit it with sbatch\n", quote_input(script).c_str(), runs.size());
  return 0;
}

int sweep_exec(int argc, char** argv) {
  CommandLine cl("sweep exec", "lava sweep exec FILE [--scale S] --run ID [--threads T]",
                 std::string(kSweepAbout) +
                     "\n\nRuns one run of FILE: skips it if finished and evaluated, resumes it if it has a resume state,\n"
                     "otherwise starts it; then runs its evaluations that have no OUT/ID/eval/NAME.jsonl yet. lava train\n"
                     "and lava eval run in this process (a scheduler's SIGTERM reaches the trainer, which saves and\n"
                     "exits 143; an evaluation it stops runs again next time). Exit code: 0 when finished and\n"
                     "evaluated, lava train's or the first failed evaluation's otherwise.");
  cl.options().add_options()("run", po::value<std::string>(), "the run's id (lava sweep plan lists them)");
  std::string file;
  if (!parse_verb(cl, argc, argv, file)) return 0;
  const std::string id = cl.get_string("run");
  const SweepFile f = load(file, cl);
  const std::vector<SweepRun> runs = checked_runs(f, max_runs(cl));
  // Started by a lava sweep run: stop (saving) when it ends, and do not start when it has already ended.
  if (!watch_lifeline()) throw InputError("the lava sweep run that started run " + id + " has ended: not starting it");
  ExecOptions o;
  o.threads = cl.has("threads") ? cl.common().threads : 0;
  auto entry = [](int (*command)(int, char**)) {
    return [command](std::vector<std::string> args) {
      std::vector<char*> v = argv_of(args);
      return command(int(args.size()), v.data());
    };
  };
  return run_sweep_task(f, find_run(f, runs, id), o, entry(cmd_train), entry(cmd_eval));
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  const std::string verb = argc > 1 ? argv[1] : "";
  // argv + 1: the verb takes the command name's place ("lava sweep plan ..." parses like "lava plan ...").
  if (verb == "plan") return sweep_plan(argc - 1, argv + 1);
  if (verb == "run") return sweep_run(argc - 1, argv + 1);
  if (verb == "slurm") return sweep_slurm(argc - 1, argv + 1);
  if (verb == "exec") return sweep_exec(argc - 1, argv + 1);
  if (verb == "--help" || verb == "-h") {
    std::printf("usage: lava sweep plan|run|slurm|exec FILE [options]\n\n%s\n\n`lava sweep VERB --help` lists a verb's options.\n",
                kSweepAbout);
    return 0;
  }
  throw UsageError(verb.empty() ? "lava sweep: needs plan, run, slurm or exec (lava sweep --help)"
                                : "lava sweep: unknown verb '" + verb + "' (plan, run, slurm or exec)");
}

}  // namespace lava
