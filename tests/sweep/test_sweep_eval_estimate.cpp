// lava sweep plan --estimate's cost of a run's evaluations: the timing sizes, one example's cost from two timings
// with a fake timer (cpu = load + n·e), the option the timing leaves out (limit) and one it keeps (gold-align), the
// Slurm limit from training and evaluations together, and end to end a sweep with [eval] sections on tiny
// synthetic data, timed on the timing run's model and, once a run has trained, on its own. Nothing here asserts on
// a measured speed.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "sweep/eval_estimate.hpp"
#include "sweep/run_estimate.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

using namespace lava;

namespace {

std::set<std::string> train_options(const std::string&) { return {"data", "attn", "epochs"}; }
std::set<std::string> eval_options(const std::string&) { return {"split", "kmax", "bleu", "limit", "gold-align"}; }

std::string arg_after(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return "";
}

// The number after "\"KEY\":" in a JSON line.
double json_number(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  return std::stod(line.substr(at + key.size() + 3));
}

std::string json_string(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":\"");
  if (at == std::string::npos) return "";
  const size_t start = at + key.size() + 4;
  return line.substr(start, line.find('"', start) - start);
}

}  // namespace

TEST_CASE("eval estimate: timing sizes n₂ = min(n, examples), n₁ = n₂/4; one example's cost from two timings") {
  CHECK(eval_timing_sizes(2000, 40).n1 == 10);
  CHECK(eval_timing_sizes(2000, 40).n2 == 40);
  CHECK(eval_timing_sizes(20, 40).n2 == 20);  // a split smaller than the timing: all of it, and a quarter
  CHECK(eval_timing_sizes(20, 40).n1 == 5);
  CHECK(eval_timing_sizes(3, 40).n1 == 1);
  CHECK(eval_timing_sizes(1, 40).n1 == 1);  // one example: one timing, load included
  CHECK(eval_timing_sizes(1, 40).n2 == 1);

  // cpu(n) = 1.5 s + n · 0.02 s
  CHECK(seconds_per_example(10, 1.5 + 10 * 0.02, 40, 1.5 + 40 * 0.02) == doctest::Approx(0.02));
  CHECK(seconds_per_example(10, 2.0, 40, 1.9) == 0.0);  // noise: never negative
  CHECK(seconds_per_example(1, 0, 1, 1.52) == doctest::Approx(1.52));
  CHECK(eval_option_untimed("limit"));
  CHECK_FALSE(eval_option_untimed("gold-align"));  // lava eval scores the first --limit pairs' alignments
  CHECK_FALSE(eval_option_untimed("kmax"));
}

TEST_CASE("eval estimate: an evaluation's core-seconds with a fake timer; its limit untimed, its gold-align timed") {
  TempDir d("eval_estimate_fake");
  write_text(d.file("e.ini"), "data = corpus\ngrid.attn = soft, marginal\n[eval test]\nsplit = test\nbleu = true\n"
                              "limit = 0\n[eval k2]\nkmax = 2\ngold-align = g.txt\nonly.attn = marginal\n");
  const SweepFile f = read_sweep_file(d.file("e.ini"), train_options, "", eval_options);
  const std::vector<SweepRun> runs = expand_sweep(f);
  TempDir scratch("eval_estimate_scratch");
  const TimedTrainSetup setup{"lava", f.task, f.dir, scratch.dir.string(), 1};
  // A split of 2000 examples; the timing evaluates --limit n in load + n·e CPU seconds.
  const double load = 3.0, e = 0.125;
  std::vector<int64_t> limits;
  std::string last_config;
  std::vector<std::vector<std::string>> counted;
  auto examples_of = [&](const std::vector<std::string>& args) {
    counted.push_back(args);
    return int64_t(2000);
  };
  auto timer = [&](const std::vector<std::string>& args) {
    const std::string config = slurp(arg_after(args, "--config"));
    CHECK(config.find("limit") == std::string::npos);
    last_config = config;
    CHECK(arg_after(args, "--model") == "/m/model.safetensors");
    CHECK(arg_after(args, "--threads") == "1");
    limits.push_back(std::stoll(arg_after(args, "--limit")));
    return load + double(limits.back()) * e;
  };
  const EvalCost c = time_evaluation(setup, f, runs[1], f.evals[0], "/m/model.safetensors", 40, examples_of, timer);
  CHECK(c.name == "test");
  CHECK(c.examples == 2000);
  // cpu(40) − cpu(10) = 3.75 s < cpu(10) = 4.25 s: within the load's noise, so n₂ grows 4x, to 160.
  CHECK(limits == std::vector<int64_t>{10, 40, 160});
  CHECK(c.example_s == doctest::Approx(e));
  CHECK(c.core_seconds() == doctest::Approx(2000 * e));  // the load, once, is not an example's
  // The examples are counted from the section as the run gets it: its own limit included.
  REQUIRE(counted.size() == 1);
  CHECK(slurp(arg_after(counted[0], "--config")).find("limit = 0") != std::string::npos);

  limits.clear();
  const EvalCost k2 = time_evaluation(setup, f, runs[1], f.evals[1], "/m/model.safetensors", 400, examples_of, timer);
  CHECK(limits == std::vector<int64_t>{100, 400});
  CHECK(last_config.find("gold-align = g.txt") != std::string::npos);  // its alignment pass is timed too
  CHECK(k2.core_seconds() == doctest::Approx(2000 * e));

  // A difference that stays small grows n₂ up to the whole split, and no further.
  limits.clear();
  auto hundred = [](const std::vector<std::string>&) { return int64_t(100); };
  const EvalCost cheap = time_evaluation(setup, f, runs[1], f.evals[0], "/m/model.safetensors", 40, hundred,
                                         [&](const std::vector<std::string>& args) { return 0.001 * timer(args); });
  CHECK(limits == std::vector<int64_t>{10, 40, 100});  // 4 · 40 would be past the split
  CHECK(cheap.core_seconds() == doctest::Approx(100 * 0.001 * e));

  // A split of one example is timed once, its load included; one of none is not timed.
  limits.clear();
  auto one = [](const std::vector<std::string>&) { return int64_t(1); };
  CHECK(time_evaluation(setup, f, runs[1], f.evals[0], "/m/model.safetensors", 40, one, timer).core_seconds() ==
        doctest::Approx(load + e));
  CHECK(limits == std::vector<int64_t>{1});
  limits.clear();
  auto none = [](const std::vector<std::string>&) { return int64_t(0); };
  CHECK(time_evaluation(setup, f, runs[1], f.evals[0], "/m/model.safetensors", 40, none, timer).core_seconds() == 0);
  CHECK(limits.empty());
}

TEST_CASE("eval estimate: Slurm's limit rests on the longest run's training and evaluations together") {
  SweepEstimate est;
  est.runs.resize(2);
  est.runs[0].core_hours = 2.0, est.runs[0].eval_core_hours = 0.1;
  est.runs[1].core_hours = 1.5, est.runs[1].eval_core_hours = 1.0;  // shorter training, longer in all
  CHECK(est.runs[1].total_core_hours() == 2.5);
  CHECK(longest_run_hours(est) == 2.5);
  CHECK(slurm_time_limit(longest_run_hours(est), kSlurmTimeFactor, kSlurmTimeExtraMinutes) == "03:55:00");
}

TEST_CASE("cli: lava sweep plan --estimate times a sweep's [eval] sections, on a trained run's model once it has one" *
          doctest::timeout(300)) {
  TempDir d("eval_estimate_cli");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 200 --valid 20 --test 30 --vocab 40 -q").code == 0);
  write_text(d.file("e.ini"), "data = synth\nepochs = 2\nbatch-size = 16\nemb-size = 8\nhidden-size = 8\n"
                              "attn-size = 8\ninf-hidden = 8\ngrid.attn = soft, marginal\n"
                              "[eval test]\nsplit = test\nbleu = true\nbeam = 4\n"
                              "[eval k2]\nsplit = valid\nkmax = 2\nlimit = 12\nonly.attn = marginal\n");
  CliResult r = run_lava("sweep plan " + d.file("e.ini") + " --estimate --estimate-steps 8 --estimate-examples 8 "
                         "--format json");
  REQUIRE(r.code == 0);
  INFO(r.err);
  // soft: test (30 examples, timed at 2 and 8); marginal: test and k2 (its limit: 12 of the 20 valid pairs).
  CHECK(r.err.find("evaluation test of run ") != std::string::npos);
  CHECK(r.err.find("timing 2 and 8 of its 30 examples") != std::string::npos);
  CHECK(r.err.find("timing 2 and 8 of its 12 examples") != std::string::npos);
  std::vector<std::string> rows = lines_of(r.out);
  REQUIRE(rows.size() == 3);  // 2 runs, the total
  double eval_sum = 0, total_sum = 0;
  for (int i = 0; i < 2; ++i) {
    const std::string& row = rows[size_t(i)];
    CHECK(json_number(row, "evals") == (i == 0 ? 1 : 2));
    CHECK(json_string(row, "eval_model") == "timing");
    CHECK(json_number(row, "eval_core_hours") >= 0);  // a measured time: its size is not the test's business
    CHECK(json_number(row, "total_core_hours") ==
          doctest::Approx(json_number(row, "core_hours") + json_number(row, "eval_core_hours")));
    eval_sum += json_number(row, "eval_core_hours"), total_sum += json_number(row, "total_core_hours");
  }
  CHECK(json_number(rows[2], "eval_core_hours") == doctest::Approx(eval_sum));
  CHECK(json_number(rows[2], "total_core_hours") == doctest::Approx(total_sum));

  // The soft run trains; estimated again, its shape's evaluations run on its model, the other's still on the
  // timing run's.
  const std::string soft = json_string(rows[0], "id");
  REQUIRE(run_lava("sweep exec " + d.file("e.ini") + " --run " + soft + " --threads 1").code == 0);
  r = run_lava("sweep plan " + d.file("e.ini") + " --estimate --estimate-steps 8 --estimate-examples 8 --format json");
  REQUIRE(r.code == 0);
  rows = lines_of(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(json_string(rows[0], "eval_model") == "trained");
  CHECK(json_string(rows[1], "eval_model") == "timing");

  // Slurm's limit says it counts both; the table shows the columns.
  r = run_lava("sweep slurm " + d.file("e.ini") + " --estimate --estimate-steps 8 --estimate-examples 8 --script " +
               d.file("a.sbatch"));
  REQUIRE(r.code == 0);
  CHECK(r.out.find("(training and evaluations), x 1.5 + 10 min") != std::string::npos);
  CHECK(std::regex_search(slurp(d.file("a.sbatch")), std::regex("\n#SBATCH --time=00:1[0-9]:00\n")));
  r = run_lava("sweep plan " + d.file("e.ini") + " --estimate --estimate-steps 8 --estimate-examples 8");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("core_hours  evals  eval_model  eval_core_hours  total_core_hours") != std::string::npos);
}

TEST_CASE("cli: lava sweep plan --estimate on an evaluation of missing data names the section, exit 1") {
  TempDir d("eval_estimate_bad");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 100 --valid 10 --test 10 --vocab 20 -q").code == 0);
  write_text(d.file("m.ini"), "data = synth\nepochs = 1\nbatch-size = 16\nemb-size = 8\nhidden-size = 8\n"
                              "attn-size = 8\n[eval other]\nsplit = test\ndata = no-such-corpus\n");
  CliResult r = run_lava("sweep plan " + d.file("m.ini") + " --estimate --estimate-steps 8");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  const std::vector<std::string> err = lines_of(r.err);
  REQUIRE(!err.empty());
  CHECK(err.back().find(d.file("m.ini") + ":7: [eval other] of run ") != std::string::npos);
  CHECK(err.back().find("no-such-corpus") != std::string::npos);
}
