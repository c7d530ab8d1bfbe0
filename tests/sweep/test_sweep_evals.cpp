// A sweep run's evaluations: run after training in the same task, each into RUN/eval/NAME.jsonl with its own
// config; a finished evaluation is skipped, a stopped or failed one runs again (and only it) in the next session;
// then a real translation run through lava sweep exec, evaluated with the options its section gives.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/read_file.hpp"
#include "report/run_record.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "sweep/run_evals.hpp"
#include "sweep/run_exec.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

using namespace lava;

namespace {

std::set<std::string> train_options(const std::string&) { return {"data", "attn", "epochs"}; }
std::set<std::string> eval_options(const std::string&) { return {"split", "kmax", "bleu", "data"}; }

// The value after `flag` in args, or "".
std::string arg_after(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return "";
}

}  // namespace

TEST_CASE("sweep evals: after training, each evaluation once; a stopped one alone runs again next session") {
  TempDir d("sweep_evals");
  write_text(d.file("t.ini"), "data = corpus\ngrid.attn = soft, marginal\n[eval test]\nsplit = test\nbleu = true\n"
                              "[eval k2]\nkmax = 2\nonly.attn = marginal\n[eval other]\nsplit = valid\ndata = other\n");
  const SweepFile f = read_sweep_file(d.file("t.ini"), train_options, "", eval_options);
  const std::vector<SweepRun> runs = expand_sweep(f);
  REQUIRE(runs.size() == 2);
  const SweepRun& r = runs[1];  // marginal: all three evaluations
  REQUIRE(r.evals == std::vector<std::string>{"test", "k2", "other"});

  int trained = 0;
  std::map<std::string, int> evaluated;
  std::string stop_at;  // the evaluation that is stopped (exit 143, part of its output written) once
  std::map<std::string, std::vector<std::string>> args_of;
  auto train = [&](std::vector<std::string>) {
    ++trained;
    write_text(r.dir + "/model.safetensors", "m");
    std::printf("{\"event\":\"done\"}\n");
    return 0;
  };
  auto eval = [&](std::vector<std::string> args) {
    const std::string config = arg_after(args, "--config");
    const std::string name = std::filesystem::path(config).stem().string();
    ++evaluated[name];
    args_of[name] = args;
    std::printf("{\"split\":\"x\",\"name\":\"%s\"}\n", name.c_str());
    if (name == stop_at) {
      stop_at.clear();
      return 143;
    }
    return 0;
  };

  stop_at = "k2";
  CHECK(run_sweep_task(f, r, {}, train, eval) == 143);
  CHECK(trained == 1);
  CHECK(evaluated == std::map<std::string, int>{{"test", 1}, {"k2", 1}, {"other", 1}});  // all tried, in order
  CHECK(read_run_status(r.dir).state == RunState::finished);
  CHECK(missing_evals(r) == std::vector<std::string>{"k2"});
  CHECK_FALSE(std::filesystem::exists(r.dir + "/eval/k2.jsonl"));
  CHECK_FALSE(std::filesystem::exists(r.dir + "/eval/k2.jsonl.tmp"));  // no partial result left to be taken for one
  CHECK_FALSE(run_complete(r));
  CHECK(read_file(r.dir + "/eval/test.jsonl") == "{\"split\":\"x\",\"name\":\"test\"}\n");

  // What each evaluation was given: its section's options in its own config, the run's model, task and data.
  const std::vector<std::string>& a = args_of["test"];
  CHECK(a.front() == "eval");
  CHECK(arg_after(a, "--task") == "nmt");
  CHECK(arg_after(a, "--model") == r.dir + "/model.safetensors");
  CHECK(arg_after(a, "--data") == "corpus");
  CHECK(arg_after(a, "--format") == "json");
  CHECK(read_file(r.dir + "/eval/test.ini") == "split = test\nbleu = true\n");
  CHECK(arg_after(args_of["other"], "--data") == "");  // its own data = other, in its config
  CHECK(read_file(r.dir + "/eval/other.ini") == "split = valid\ndata = other\n");

  // A session killed (SIGKILL, or SIGTERM's default action: no handler is installed while lava eval runs) in the
  // middle of an evaluation leaves part of its output in NAME.jsonl.tmp, never NAME.jsonl.
  write_text(r.dir + "/eval/k2.jsonl.tmp", "{\"split\":\"x\",\"na");
  // The next session trains nothing and runs only the stopped evaluation, from its start.
  CHECK(run_sweep_task(f, r, {}, train, eval) == 0);
  CHECK(trained == 1);
  CHECK(evaluated == std::map<std::string, int>{{"test", 1}, {"k2", 2}, {"other", 1}});
  CHECK(run_complete(r));
  CHECK(read_file(r.dir + "/eval/k2.jsonl") == "{\"split\":\"x\",\"name\":\"k2\"}\n");
  CHECK_FALSE(std::filesystem::exists(r.dir + "/eval/k2.jsonl.tmp"));
  // Then the run is complete: nothing runs at all.
  CHECK(run_sweep_task(f, r, {}, train, eval) == 0);
  CHECK(trained == 1);
  CHECK(evaluated == std::map<std::string, int>{{"test", 1}, {"k2", 2}, {"other", 1}});

  // An evaluation added to the file later: the same run (same id), trained already, gets just that one.
  write_text(d.file("t.ini"), read_file(d.file("t.ini")) + "[eval late]\nsplit = train\n");
  const SweepFile g = read_sweep_file(d.file("t.ini"), train_options, "", eval_options);
  const SweepRun r2 = expand_sweep(g)[1];
  CHECK(r2.id == r.id);
  CHECK(missing_evals(r2) == std::vector<std::string>{"late"});
  CHECK(run_sweep_task(g, r2, {}, train, eval) == 0);
  CHECK(trained == 1);
  CHECK(evaluated["late"] == 1);
}

TEST_CASE("sweep evals: an evaluation that succeeds without a JSON line failed; a failed training runs none") {
  TempDir d("sweep_evals_fail");
  write_text(d.file("t.ini"), "data = corpus\ngrid.attn = soft\n[eval test]\nsplit = test\n");
  const SweepFile f = read_sweep_file(d.file("t.ini"), train_options, "", eval_options);
  const SweepRun r = expand_sweep(f)[0];
  int evaluated = 0;
  auto failing_train = [](std::vector<std::string>) { return 1; };
  auto silent_eval = [&](std::vector<std::string>) {
    ++evaluated;
    return 0;
  };
  CHECK(run_sweep_task(f, r, {}, failing_train, silent_eval) == 1);
  CHECK(evaluated == 0);
  CHECK(read_run_status(r.dir).state == RunState::failed);
  auto train = [](std::vector<std::string>) { return 0; };
  CHECK(run_sweep_task(f, r, {}, train, silent_eval) == 1);
  CHECK(evaluated == 1);
  CHECK(missing_evals(r) == std::vector<std::string>{"test"});
  CHECK(read_file(r.dir + "/eval/test.log").find("wrote no JSON line") != std::string::npos);
}

TEST_CASE("cli: lava sweep exec trains a translation run, then evaluates it as its section says, once" *
          doctest::timeout(300)) {
  TempDir d("sweep_evals_cli");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 40 --valid 8 --test 6 --vocab 20 -q").code == 0);
  write_text(d.file("t.ini"), "data = synth\nepochs = 1\nbatch-size = 8\nemb-size = 8\nhidden-size = 8\nattn-size = 8\n"
                              "grid.attn = marginal\n[eval test]\nsplit = test\nbleu = true\nbeam = 2\n"
                              "[eval k1]\nkmax = 1\n");
  const std::string plan = run_lava("sweep plan " + d.file("t.ini") + " --format csv").out;
  const std::string id = plan.substr(plan.find('\n') + 3, 16);  // "0,ID,..."
  CliResult r = run_lava("sweep exec " + d.file("t.ini") + " --run " + id + " --threads 1");
  CHECK(r.code == 0);
  const std::string dir = d.file("t.runs/" + id);
  const std::string test = read_file(dir + "/eval/test.jsonl"), k1 = read_file(dir + "/eval/k1.jsonl");
  CHECK(test.find("\"split\":\"test\"") != std::string::npos);
  CHECK(test.find("\"bleu\":") != std::string::npos);
  CHECK(test.find("\"beam\":2") != std::string::npos);
  CHECK(k1.find("\"kmax\":1") != std::string::npos);
  CHECK(k1.find("\"bleu\":") == std::string::npos);
  // lava eval run by hand with the same options prints the same figures.
  CliResult by_hand = run_lava("eval --task nmt --model " + dir + "/model.safetensors --data " + d.file("synth") +
                               " --split test --bleu --beam 2 --format json -q --threads 1");
  REQUIRE(by_hand.code == 0);
  CHECK(by_hand.out == test);
  r = run_lava("sweep exec " + d.file("t.ini") + " --run " + id);
  CHECK(r.code == 0);
  CHECK(r.out.find("finished, skipped") != std::string::npos);
  CHECK(r.out.find("evaluation") == std::string::npos);
}
