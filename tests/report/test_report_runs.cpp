// lava report: runs grouped by grid values with mean ± sd over seeds, checked against a hand computation; a failed,
// stopped or unfinished run is a row with its state and log, never dropped; run directories read back.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "report/run_record.hpp"
#include "report/run_table.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

RunRecord record(int64_t index, const std::string& attn, int64_t seed, RunState state, double ppl) {
  RunRecord r;
  r.dir = "runs/r" + std::to_string(index);
  r.id = "id" + std::to_string(index);
  r.sweep = "/s/attn.ini";
  r.task = "nmt";
  r.index = index;
  r.seed = seed;
  r.grid = {{"attn", attn}};
  r.status.state = state;
  r.status.exit_code = state == RunState::failed ? 2 : state == RunState::stopped ? 143 : 0;
  if (state == RunState::stopped) r.status.signal = "SIGTERM";
  if (state == RunState::finished) {
    JsonValue s = JsonValue::object();
    s.set("event", JsonValue("done"));
    s.set("valid_ppl", JsonValue(ppl));
    s.set("nan", JsonValue(false));
    r.summary = s;
  }
  return r;
}

}  // namespace

TEST_CASE("report: mean and sample sd over seeds per grid point; every unfinished run is a row with its log") {
  std::vector<RunRecord> runs = {
      record(0, "soft", 1, RunState::finished, 1.0),   record(1, "soft", 2, RunState::finished, 2.0),
      record(2, "soft", 3, RunState::finished, 4.0),   record(3, "marginal", 1, RunState::finished, 10.0),
      record(4, "marginal", 2, RunState::failed, 0),   record(5, "marginal", 3, RunState::stopped, 0),
      record(6, "var-enum", 1, RunState::running, 0),
  };
  // The run still training says how far it got: its last epoch line's validation of the table's figures.
  runs[6].last_epoch = JsonValue::object();
  runs[6].last_epoch->set("event", JsonValue("epoch"));
  runs[6].last_epoch->set("epoch", JsonValue(4.0));
  runs[6].last_epoch->set("valid_ppl", JsonValue(12.25));
  RunTableOptions o;
  o.metrics = {"ppl"};
  const std::string csv = run_table(runs, o, false).render(OutputFormat::csv);
  // soft: mean 7/3; sd = sqrt(((1-7/3)^2 + (2-7/3)^2 + (4-7/3)^2) / 2) = sqrt(14/3 / 2) = sqrt(7/3).
  const double mean = (1.0 + 2.0 + 4.0) / 3.0;
  const double sd = std::sqrt(((1 - mean) * (1 - mean) + (2 - mean) * (2 - mean) + (4 - mean) * (4 - mean)) / 2);
  CHECK(mean == doctest::Approx(7.0 / 3.0).epsilon(1e-15));
  CHECK(sd == doctest::Approx(std::sqrt(7.0 / 3.0)).epsilon(1e-15));
  const std::string expect = fmt::format(
      "attn,seeds,n,ppl,ppl_sd,status,log\n"
      "soft,1-3,3,{},{},ok,\n"
      "marginal,1,1,10,nan,ok,\n"
      "marginal,2,0,nan,nan,failed (exit 2),runs/r4/train.log\n"
      "marginal,3,0,nan,nan,\"stopped (SIGTERM), resumable\",runs/r5/train.log\n"
      "var-enum,1,0,nan,nan,\"running, or killed; epoch 4: ppl 12.25\",runs/r6/train.log\n",
      mean, sd);
  CHECK(csv == expect);
  const std::string md = run_table(runs, o, true).render_markdown();
  CHECK(md.find("| soft | 1-3 | 2.333 ± 1.528 | ok |  |\n") != std::string::npos);
  CHECK(md.find("| marginal | 2 | - | failed (exit 2) | runs/r4/train.log |\n") != std::string::npos);

  // A figure no finished run reports is a usage error naming what they do report.
  o.metrics = {"bleu"};
  try {
    (void)run_table(runs, o, false);
    FAIL("no error for an unknown figure");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("\"bleu\"") != std::string::npos);
    CHECK(std::string(e.what()).find("valid_ppl") != std::string::npos);
  }
}

TEST_CASE("report: a run directory reads back; a broken metrics line names file:line") {
  TempDir d("report_runs");
  const std::string run = d.file("abc");
  std::filesystem::create_directories(run);
  write_text(run + "/run.json", R"({"id":"abc","index":3,"sweep":"/s.ini","task":"nmt","seed":2,"grid":{"attn":"soft"}})");
  RunStatus st;
  st.state = RunState::finished;
  st.sessions = 2;
  st.host = "h";
  write_run_status(run, st);
  write_text(run + "/metrics.jsonl",
             "{\"event\":\"epoch\",\"epoch\":1,\"valid_kl\":0.5,\"valid_ppl\":9,\"best\":true}\n"
             "{\"event\":\"epoch\",\"epoch\":2,\"valid_kl\":0.7,\"valid_ppl\":11,\"best\":false}\n"
             "{\"event\":\"stopped\"}\n{\"event\":\"done\",\"valid_ppl\":9,\"nan\":false}\n");
  const RunRecord r = read_run_record(run);
  CHECK(r.index == 3);
  CHECK(r.seed == 2);
  CHECK(r.status.state == RunState::finished);
  CHECK(r.status.sessions == 2);
  REQUIRE(r.summary);
  CHECK(r.summary->at("valid_kl").number() == 0.5);  // from the best epoch's line
  REQUIRE(r.last_epoch);
  CHECK(r.last_epoch->at("epoch").number() == 2);
  CHECK(find_run_dirs({d.dir.string()}) == std::vector<std::string>{run});

  write_text(run + "/metrics.jsonl", "{\"event\":\"epoch\"}\n{\"event\":\"done\",\n");
  CHECK(read_run_record(run).unreadable.find(run + "/metrics.jsonl:2:") == 0);
  write_text(run + "/status.json", "{\"state\":\"exploded\",\"exit\":0,\"sessions\":1}\n");
  check_input_error([&] { read_run_status(run); }, run + "/status.json", "unknown run state");
  check_input_error([&] { find_run_dirs({d.file("nothing")}); }, d.file("nothing"), "not a directory");
}

TEST_CASE("report: a figure EVAL:KEY is KEY of the result row of RUN/eval/EVAL.jsonl, mean and sd over seeds") {
  TempDir d("report_eval_rows");
  // Two seeds of one row: aer 0.25 and 0.75 (mean 0.5, sd sqrt(0.125)), with event lines the row must skip.
  auto run_at = [&](const std::string& id, int seed, double aer, double bleu) {
    const std::string run = d.file("runs/" + id);
    std::filesystem::create_directories(run + "/eval");
    write_text(run + "/run.json", fmt::format(R"({{"id":"{}","index":{},"sweep":"/s.ini","task":"nmt","seed":{},)"
                                              R"("grid":{{"label":"var-enum+warm"}}}})", id, seed, seed));
    RunStatus st;
    st.state = RunState::finished;
    write_run_status(run, st);
    write_text(run + "/metrics.jsonl", "{\"event\":\"done\",\"valid_ppl\":2,\"nan\":false}\n");
    write_text(run + "/eval/test.jsonl", fmt::format("{{\"event\":\"bleu_bucket\",\"bleu\":99}}\n"
                                                     "{{\"split\":\"test\",\"aer_posterior\":{},\"bleu\":{}}}\n", aer, bleu));
    write_text(run + "/eval/test.log", "not JSON: logs are not evaluations\n");
    return run;
  };
  const std::string a = run_at("a", 1, 0.25, 10), b = run_at("b", 2, 0.75, 20);
  std::vector<RunRecord> runs = {read_run_record(a), read_run_record(b)};
  REQUIRE(runs[0].unreadable.empty());
  REQUIRE(runs[0].evals.size() == 1);
  CHECK(runs[0].evals[0].first == "test");
  RunTableOptions o;
  o.metrics = {"ppl", "test:aer_posterior", "test:bleu"};
  CHECK(run_table(runs, o, false).render(OutputFormat::csv) ==
        fmt::format("label,seeds,n,ppl,ppl_sd,test:aer_posterior,test:aer_posterior_sd,test:bleu,test:bleu_sd,status,log\n"
                    "var-enum+warm,1-2,2,2,0,0.5,{},15,{},ok,\n", std::sqrt(0.125), std::sqrt(50.0)));

  // A key no evaluation has, or an evaluation no run has, is a usage error naming what the runs have.
  for (const auto& [metric, names] : std::vector<std::pair<std::string, std::string>>{
           {"test:aer_q", "test:aer_posterior"}, {"length:bleu", "evaluations test"}}) {
    CAPTURE(metric);
    o.metrics = {metric};
    try {
      (void)run_table(runs, o, false);
      FAIL("no error for an unknown figure");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()).find("\"" + metric + "\"") != std::string::npos);
      CHECK(std::string(e.what()).find(names) != std::string::npos);
    }
  }

  // An evaluation file without a result row makes its run unreadable, naming the file.
  write_text(b + "/eval/test.jsonl", "{\"event\":\"bleu_bucket\",\"bleu\":99}\n");
  CHECK(read_run_record(b).unreadable.find(b + "/eval/test.jsonl:") == 0);
}

TEST_CASE("report: runs are found at any depth below DIR, not inside a run, not through a symlink") {
  TempDir d;
  auto run_at = [&](const std::string& rel, const std::string& id) {
    const std::string run = d.file(rel);
    std::filesystem::create_directories(run + "/eval");
    write_text(run + "/run.json", "{\"id\":\"" + id + "\",\"index\":0,\"sweep\":\"/s.ini\",\"task\":\"nmt\",\"seed\":1,\"grid\":{}}");
    return run;
  };
  const std::string a = run_at("sweeps/nmt/aaa", "a"), b = run_at("sweeps/vqa/mix/bbb", "b");
  // A run.json inside a run's own folder is no run of its own.
  run_at("sweeps/nmt/aaa/eval/inner", "inner");
  std::filesystem::create_directories(d.file("elsewhere"));
  const std::string c = run_at("elsewhere/ccc", "c");
  std::filesystem::create_directory_symlink(d.file("elsewhere"), d.file("sweeps/link"));
  CHECK(find_run_dirs({d.file("sweeps")}) == std::vector<std::string>{a, b});
  CHECK(find_run_dirs({d.dir.string()}) == std::vector<std::string>{c, a, b});
  std::filesystem::create_directories(d.file("empty/deep/er"));
  check_input_error([&] { find_run_dirs({d.file("empty")}); }, d.file("empty"), "no runs here");
}
