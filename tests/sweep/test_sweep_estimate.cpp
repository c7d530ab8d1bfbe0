// lava sweep plan --estimate: the arithmetic of a run's length (updates an epoch, max-steps, patience with and
// without a hint, validations), the grouping of runs into shapes that share one timing, the cost of an update from
// two timing runs, Slurm's --time from an estimate and its override, and a sweep whose data is missing. Nothing here
// asserts on a measured speed.
#include <doctest/doctest.h>

#include <regex>

#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "core/check.hpp"
#include "sweep/run_estimate.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"
#include "sweep/timed_train.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

std::set<std::string> fake_train_options(const std::string&) {
  return {"task", "data", "attn", "lr", "epochs", "threads", "hidden-size", "save", "seed", "warm-start", "patience",
          "max-steps"};
}

std::vector<SweepRun> runs_of(const std::string& text) {
  return expand_sweep(parse_sweep_file("/tmp/sw/e.ini", text, fake_train_options));
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("estimate: updates an epoch from the training examples and the batch, or from a run's epoch position") {
  CHECK(updates_per_epoch(200, 16) == 13);
  CHECK(updates_per_epoch(192, 16) == 12);
  CHECK(updates_per_epoch(33935, 32) == 1061);
  CHECK(updates_per_epoch(0, 32) == 0);
  // The small translation table's timing run: 20 updates at epoch position 20 / 1061, as lava train prints it.
  CHECK(batches_from_position(20, 0.01885014137606032) == 1061);
  CHECK(batches_from_position(13, 1.0) == 13);
  CHECK_THROWS_AS(batches_from_position(20, 0.0), InputError);
  CHECK_THROWS_AS(batches_from_position(20, 1.5), InputError);
}

TEST_CASE("estimate: a run's length from max-steps, epochs, patience (with and without a hint) and valid-every") {
  RunBudget b{.epochs = 3, .max_steps = 0, .patience = 0};
  ExpectedLength e = expected_length(b, 100, 0);
  CHECK(e.updates == 300);
  CHECK(e.validations == 3);
  CHECK(e.basis == "epochs");

  b.max_steps = 250;  // stops inside epoch 3: two epoch ends plus the stopping validation
  e = expected_length(b, 100, 0);
  CHECK(e.updates == 250);
  CHECK(e.validations == 3);
  CHECK(e.basis == "max-steps");
  b.max_steps = 1000;  // past the epochs' budget: the epochs stop it first
  CHECK(expected_length(b, 100, 0).updates == 300);

  b = RunBudget{.epochs = 30, .max_steps = 0, .patience = 2};
  e = expected_length(b, 1061, 0);
  CHECK(e.updates == 30 * 1061);
  CHECK(e.basis == "epochs (patience: upper bound)");
  e = expected_length(b, 1061, 12);
  CHECK(e.updates == 12 * 1061);
  CHECK(e.validations == 12);
  CHECK(e.basis == "expected-epochs (patience)");
  CHECK(expected_length(b, 1061, 40).updates == 30 * 1061);  // a hint past the budget is the budget

  // valid-every 30 over epochs of 100: steps 30, 60, 90 inside each epoch (300 is an epoch end, not counted twice).
  b = RunBudget{.epochs = 3, .max_steps = 0, .patience = 0, .valid_every = 30};
  CHECK(expected_length(b, 100, 0).validations == 3 + 9);
  b.max_steps = 250;  // 30..240 inside (8 of them), the ends of epochs 1 and 2, the stop at 250
  CHECK(expected_length(b, 100, 0).validations == 8 + 2 + 1);
}

TEST_CASE("estimate: runs that differ in seed, lr or stopping rules share a shape; attn or a warm start do not") {
  const std::vector<SweepRun> runs =
      runs_of("data = c\nepochs = 5\ngrid.attn = soft, marginal\ngrid.lr = 1e-3, 3e-3\nseeds = 1-2\n");
  REQUIRE(runs.size() == 8);
  CHECK(group_by_shape(runs) == std::vector<size_t>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(cost_shape_key(runs[0]) == cost_shape_key(runs[3]));
  CHECK(cost_shape_key(runs[0]).find("seed") == std::string::npos);
  CHECK(cost_shape_key(runs[0]).find("attn=soft\n") != std::string::npos);

  const std::vector<SweepRun> warm = runs_of("data = c\nattn = var-enum\ngrid.warm-start = 0, 100\ngrid.patience = 1, 2\n");
  CHECK(group_by_shape(warm) == std::vector<size_t>{0, 0, 1, 1});
  const std::vector<SweepRun> hidden = runs_of("data = c\ngrid.hidden-size = 8, 16\n");
  CHECK(group_by_shape(hidden) == std::vector<size_t>{0, 1});
}

TEST_CASE("estimate: an update's and a validation's cost from two timing runs; a run's core-seconds") {
  // cpu = load + n·s + m·v with load 1 s, s = 0.05 s, v = 2 s; the loop's wall clock runs at twice the CPU time.
  const TrainTiming a{.steps = 10, .loop_seconds = 5.0, .cpu_seconds = 3.5, .epoch_position = 0.1, .validations = 1};
  const TrainTiming b{.steps = 40, .loop_seconds = 8.0, .cpu_seconds = 5.0, .epoch_position = 0.4, .validations = 1};
  const TrainTiming v{.steps = 40, .loop_seconds = 20.0, .cpu_seconds = 11.0, .epoch_position = 0.1, .validations = 4};
  const StepCost c = step_cost(a, b, v);
  CHECK(c.update_s == doctest::Approx(0.05));
  CHECK(c.update_wall_s == doctest::Approx(0.1));
  CHECK(c.validation_s == doctest::Approx(2.0));
  CHECK(c.batches_per_epoch == 100);
  CHECK_THROWS_AS(step_cost(b, b, v), InputError);  // an epoch no longer than the short run cannot be timed
  CHECK_THROWS_AS(step_cost(a, b, b), InputError);  // no more validations than the long run: v unknown

  StepCost warm = c;
  warm.update_s = 0.2;
  const ExpectedLength len{.updates = 1000, .validations = 10, .basis = "epochs"};
  CHECK(run_core_seconds(len, 0, c, warm) == doctest::Approx(1000 * 0.05 + 10 * 2.0));
  CHECK(run_core_seconds(len, 300, c, warm) == doctest::Approx(300 * 0.2 + 700 * 0.05 + 10 * 2.0));
  CHECK(run_core_seconds(len, 5000, c, warm) == doctest::Approx(1000 * 0.2 + 10 * 2.0));
}

TEST_CASE("estimate: a timing run's figures from its JSON lines; a missing line is an InputError") {
  const std::string out =
      "{\"event\":\"epoch\",\"task\":\"nmt\",\"epoch\":1,\"steps\":20,\"seconds\":3.76,\"partial\":true}\n"
      "{\"event\":\"done\",\"task\":\"nmt\",\"steps\":20,\"best_epoch\":0.01885014137606032,\"seconds\":3.87}\n";
  const TrainTiming t = parse_train_timing(out, "m.jsonl");
  CHECK(t.steps == 20);
  CHECK(t.loop_seconds == 3.76);
  CHECK(t.validations == 1);
  CHECK(batches_from_position(t.steps, t.epoch_position) == 1061);
  check_input_error([&] { parse_train_timing(out.substr(0, out.find('\n') + 1), "m.jsonl"); }, "m.jsonl", "no done line");
}

TEST_CASE("estimate: Slurm's time limit is the hours x margin plus minutes, rounded up to the minute") {
  CHECK(slurm_time_limit(1.0, 1.5, 10) == "01:40:00");
  CHECK(slurm_time_limit(0.0, 1.5, 10) == "00:10:00");
  CHECK(slurm_time_limit(1.0 / 60, 1.5, 10) == "00:12:00");  // 11.5 minutes
  CHECK(slurm_time_limit(20.0, 1.5, 10) == "1-06:10:00");
  CHECK(slurm_time_limit(2.0, 1.0, 0) == "02:00:00");
  CHECK(slurm_time_limit(0.0, 1.0, 0) == "00:01:00");  // never 0, which Slurm reads as no limit
  CHECK(kSlurmTimeFactor == 1.5);
  CHECK(kSlurmTimeExtraMinutes == 10);
}

TEST_CASE("cli: lava sweep plan --estimate on tiny runs; slurm takes --time from it, --time overrides") {
  TempDir d("sweep_estimate");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 200 --valid 20 --test 10 --vocab 40 -q").code == 0);
  // 200 pairs in batches of 16: 13 updates an epoch.
  write_text(d.file("e.ini"), "data = synth\nepochs = 3\nbatch-size = 16\nemb-size = 8\nhidden-size = 8\n"
                              "attn-size = 8\ninf-hidden = 8\ngrid.attn = soft, marginal\ngrid.lr = 1e-3, 2e-3\n"
                              "seeds = 1-2\n");
  CliResult r = run_lava("sweep plan " + d.file("e.ini") + " --estimate --estimate-steps 8 --format json");
  REQUIRE(r.code == 0);
  CHECK(count(r.err, "lava sweep --estimate: shape ") == 2);  // 8 runs, 2 shapes
  const std::vector<std::string> rows = lines_of(r.out);
  REQUIRE(rows.size() == 9);  // 8 runs, the total
  for (int i = 0; i < 8; ++i) {
    CHECK(rows[size_t(i)].find("\"updates\":39,") != std::string::npos);
    CHECK(rows[size_t(i)].find("\"updates_from\":\"epochs\"") != std::string::npos);
    CHECK(rows[size_t(i)].find("\"validations\":3,") != std::string::npos);
    CHECK(rows[size_t(i)].find(i < 4 ? "\"shape\":1," : "\"shape\":2,") != std::string::npos);
  }
  CHECK(rows[8].find("\"id\":\"total\"") != std::string::npos);
  CHECK(rows[8].find("\"shape\":2,") != std::string::npos);

  r = run_lava("sweep slurm " + d.file("e.ini") + " --estimate --estimate-steps 8 --script " + d.file("a.sbatch"));
  REQUIRE(r.code == 0);
  const std::string script = slurp(d.file("a.sbatch"));
  CHECK(std::regex_search(script, std::regex("\n#SBATCH --time=00:1[0-9]:00\n")));  // minutes of runs, + 10 min
  CHECK(r.out.find("x 1.5 + 10 min") != std::string::npos);

  r = run_lava("sweep slurm " + d.file("e.ini") + " --estimate --time 03:00:00 --script " + d.file("b.sbatch"));
  REQUIRE(r.code == 0);
  CHECK(slurp(d.file("b.sbatch")).find("\n#SBATCH --time=03:00:00\n") != std::string::npos);
  CHECK(r.err.find("--estimate") == std::string::npos);  // nothing timed

  r = run_lava("sweep slurm " + d.file("e.ini") + " --script " + d.file("c.sbatch"));
  REQUIRE(r.code == 0);
  CHECK(slurp(d.file("c.sbatch")).find("--time") == std::string::npos);  // no estimate, no --time: the partition's
}

TEST_CASE("cli: --estimate counts an epoch's updates for VQA and captioning too") {
  // The timing run stops inside the first epoch; its done line's best_epoch (the epoch position) gives the epoch's
  // length. VQA and captioning once said the integer epoch there, so every epoch was costed at the timing's updates.
  TempDir d("sweep_estimate_tasks");
  REQUIRE(run_lava("data scenes --out " + d.file("scenes") + " --train 60 --valid 10 --test 10 -q").code == 0);
  // VQA: 300 training questions in batches of 16, 19 updates an epoch.
  write_text(d.file("v.ini"), "task = vqa\ndata = scenes\nattn = soft\nepochs = 2\nbatch-size = 16\nemb-size = 8\n"
                              "hidden-size = 8\nattn-size = 8\nmlp-size = 8\n");
  CliResult r = run_lava("sweep plan " + d.file("v.ini") + " --estimate --estimate-steps 8 --format json");
  REQUIRE(r.code == 0);
  CHECK(lines_of(r.out)[0].find("\"updates\":38,") != std::string::npos);
  // Captioning: an epoch's updates counted by a whole epoch of lava train.
  const std::string caption = "task = caption\ndata = scenes\nattn = soft\nbatch-size = 16\nemb-size = 8\n"
                              "hidden-size = 8\nattn-size = 8\n";
  const CliResult epoch = run_lava("train --task caption --data " + d.file("scenes") +
                                   " --attn soft --batch-size 16 --emb-size 8 --hidden-size 8 --attn-size 8 --epochs 1 "
                                   "--format json -q");
  REQUIRE(epoch.code == 0);
  const std::smatch m = [&] {
    std::smatch found;
    REQUIRE(std::regex_search(epoch.out, found, std::regex("\"event\":\"done\".*\"steps\":([0-9]+),")));
    return found;
  }();
  const int per_epoch = std::stoi(m[1].str());
  REQUIRE(per_epoch > 8);
  write_text(d.file("c.ini"), caption + "epochs = 2\n");
  r = run_lava("sweep plan " + d.file("c.ini") + " --estimate --estimate-steps 8 --format json");
  REQUIRE(r.code == 0);
  CHECK(lines_of(r.out)[0].find("\"updates\":" + std::to_string(2 * per_epoch) + ",") != std::string::npos);
}

TEST_CASE("cli: lava sweep plan --estimate on a sweep whose data is missing is one line naming it, exit 1") {
  TempDir d("sweep_estimate_bad");
  write_text(d.file("m.ini"), "data = no-such-corpus\nepochs = 1\ngrid.attn = soft, marginal\n");
  CliResult r = run_lava("sweep plan " + d.file("m.ini") + " --estimate --estimate-steps 8");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  const std::vector<std::string> err = lines_of(r.err);
  REQUIRE(err.size() == 2);  // the progress line, the error
  CHECK(err[1].find(d.file("m.ini") + ": attn=soft") != std::string::npos);
  CHECK(err[1].find("no-such-corpus") != std::string::npos);

  r = run_lava("sweep plan " + d.file("m.ini") + " --estimate --estimate-steps 4");
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
}
