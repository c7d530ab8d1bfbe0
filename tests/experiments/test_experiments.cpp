// The experiment scripts' one command line (experiments/lib.sh: parse_args, expand_seeds, mean_sd, the job pool):
// every script takes --quick, --out, --threads, --jobs and --seed, and a bad option is one line and exit 2.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace {

const std::vector<std::string> kScripts = {"demo-nmt", "nmt-table1", "nmt-length",      "vqa-table1",
                                           "families", "seqvae-collapse", "synth-aer", "paper-tables"};

// lib.sh sourced as a script would: SCRIPT names the messages.
const std::string kLib = "set -euo pipefail\nSCRIPT=t\nsource experiments/lib.sh\n";

}  // namespace

TEST_CASE("every experiment script documents and parses the common options") {
  for (const auto& name : kScripts) {
    CAPTURE(name);
    const std::string script = "experiments/" + name + ".sh";
    auto help = run_bash(script + " --help");
    CHECK(help.code == 0);
    for (const char* opt : {"--quick", "--out", "--threads", "--jobs", "--seed"}) {
      CAPTURE(opt);
      CHECK(help.out.find(opt) != std::string::npos);
    }
    auto bad = run_bash(script + " --no-such-option");
    CHECK(bad.code == 2);
    CHECK(bad.err_lines() == 1);
    CHECK(bad.err.find("'--no-such-option'") != std::string::npos);
    auto jobs = run_bash(script + " --jobs 0");
    CHECK(jobs.code == 2);
    CHECK(jobs.err.find("--jobs") != std::string::npos);
    auto threads = run_bash(script + " --threads two");
    CHECK(threads.code == 2);
    auto seed = run_bash(script + " --seed x");
    CHECK(seed.code == 2);
    auto stray = run_bash(script + " stray");
    CHECK(stray.code == 2);
    CHECK(stray.err.find("'stray'") != std::string::npos);
  }
}

TEST_CASE("seed lists expand, and a bad one is refused") {
  auto r = run_bash(kLib + "expand_seeds 1-3; expand_seeds '1,4 7'; expand_seeds 5\n");
  CHECK(r.code == 0);
  CHECK(r.out == "1 2 3\n1 4 7\n5\n");
  for (const char* bad : {"x", "3-1", "1-", "", "1;2"}) {
    CAPTURE(bad);
    CHECK(run_bash(kLib + "expand_seeds '" + bad + "'\n").code != 0);
  }
}

TEST_CASE("mean_sd gives the mean and the sample standard deviation, and skips missing values") {
  auto r = run_bash(kLib + "mean_sd %.2f 1 2 3; echo; mean_sd %.3f 5; echo; mean_sd %.2f '' null nan; echo;"
                           " mean_sd %.1f 2 null 4; echo; mean_sd %.3f -1e-17; echo; fmt_num -0.00001 %.2f; echo;"
                           " fmt_num -0.5 %.2f; echo; fmt_num 3.5596654648e221 %.2f; echo; fmt_num 9999999 %.2f; echo\n");
  CHECK(r.code == 0);
  CHECK(r.out == "2.00 ± 1.00\n5.000\n–\n3.0 ± 1.4\n0.000\n0.00\n-0.50\n3.56e+221\n9999999.00\n");
}

TEST_CASE("the job pool runs at most JOBS at a time and reports a failed job") {
  // Each job logs its start and end; replaying the log gives the largest number running at once.
  const std::string log = temp_path("pool.log");
  auto r = run_bash(kLib + "JOBS=2\njob() { echo + >>'" + log + "'; sleep 0.3; echo - >>'" + log +
                    "'; }\nfor i in 1 2 3 4 5; do pool_run job; done\npool_wait\necho ok\n");
  CHECK(r.code == 0);
  CHECK(r.out == "ok\n");
  int running = 0, most = 0, started = 0;
  for (char c : slurp(log)) {
    if (c == '+') running++, started++;
    if (c == '-') running--;
    most = std::max(most, running);
  }
  std::remove(log.c_str());
  CHECK(started == 5);
  CHECK(most == 2);

  auto failed = run_bash(kLib + "JOBS=2\nfor i in 0 1 0; do pool_run sh -c \"exit $i\"; done\n"
                                "if pool_wait; then echo all-ok; else echo a-job-failed; fi\n");
  CHECK(failed.out == "a-job-failed\n");
}

TEST_CASE("train_variant reuses a finished run and continues a stopped one to the uninterrupted run's bytes") {
  TempDir tmp("exp_resume");
  const std::string synth = tmp.file("synth"), lib = "set -euo pipefail\nSCRIPT=t\nLAVA=" + lava_bin() +
                                                        "\nsource experiments/lib.sh\n";
  REQUIRE(run_lava("data synth --out " + synth + " --train 48 --valid 8 --test 4 --min-len 3 --max-len 6 --vocab 20 -q")
              .code == 0);
  const std::string flags = " --emb-size 6 --hidden-size 8 --attn-size 5 --inf-hidden 6 --dropout 0.2 --batch-size 8"
                            " --epochs 3";
  auto train = [&](const std::string& name, const std::string& reuse, const std::string& more) {
    return run_bash(lib + "train_variant var-sample " + synth + " " + tmp.file(name) + " " + tmp.file(name) +
                    " 0 1 7 " + reuse + flags + more + "\n");
  };
  // One uninterrupted run of 3 epochs (18 updates).
  REQUIRE(train("whole", "0", "").code == 0);
  // A run stopped after 4 updates: the state a signal leaves (a resume state, no "done" line in the log).
  REQUIRE(train("part", "0", " --max-steps 4").code == 0);
  REQUIRE(run_bash("sed -i '/\"event\":\"done\"/d' " + tmp.file("part") + ".train.jsonl\n").code == 0);
  const CliResult resumed = train("part", "1", "");
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(resumed.err.find("continuing from") != std::string::npos);
  CHECK(slurp(tmp.file("part")) == slurp(tmp.file("whole")));
  // The log kept the first session's lines and got the rest appended: the epoch lines of both, one done line.
  const std::string log = slurp(tmp.file("part") + ".train.jsonl");
  CHECK(log.find("\"steps\":4") != std::string::npos);
  CHECK(log.find("\"event\":\"done\"") != std::string::npos);
  // Finished: reused without running lava (a lava that cannot run proves it).
  const CliResult reused = run_bash("set -euo pipefail\nSCRIPT=t\nLAVA=/nonexistent\nsource experiments/lib.sh\n"
                                    "train_variant var-sample " + synth + " " + tmp.file("part") + " " +
                                    tmp.file("part") + " 0 1 7 1" + flags + "\n");
  CHECK(reused.code == 0);
  // REUSE=0 starts afresh: the same bytes again, and a log of one session.
  REQUIRE(train("part", "0", "").code == 0);
  CHECK(slurp(tmp.file("part")) == slurp(tmp.file("whole")));
  CHECK(slurp(tmp.file("part") + ".train.jsonl").find("\"steps\":4,") == std::string::npos);
}

TEST_CASE("vqa-table1's own options: --paper, --mix and --variants; a bad one is one line and exit 2") {
  const std::string script = "experiments/vqa-table1.sh";
  auto help = run_bash(script + " --help");
  for (const char* opt : {"--paper", "--mix", "--variants", "--patience 3", "vqa2"}) {
    CAPTURE(opt);
    CHECK(help.out.find(opt) != std::string::npos);
  }
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--quick --paper", "--quick and --paper"},
           {"--mix vqa3", "'vqa3'"},
           {"--mix", "--mix needs a value"},
           {"--mix ' '", "--mix needs at least one mix"},
           {"--variants 'soft nope'", "'nope'"},
           {"--paper extra", "'extra'"}}) {
    CAPTURE(args);
    auto r = run_bash(script + " " + args);
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(needle) != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("finished_done_line keeps a finished run's done line only; vqa_eval_row picks the eval rows") {
  const std::string log = temp_path("train.jsonl");
  write_text(log, "{\"event\":\"epoch\",\"epoch\":1}\n{\"event\":\"stopped\",\"signal\":\"SIGTERM\"}\n");
  auto stopped = run_bash(kLib + "finished_done_line '" + log + "'; echo .\n");
  CHECK(stopped.out == ".\n");
  write_text(log, "{\"event\":\"done\",\"stop\":\"max-minutes\",\"epochs\":2}\n");
  CHECK(run_bash(kLib + "finished_done_line '" + log + "'; echo .\n").out == ".\n");
  write_text(log, "{\"event\":\"done\",\"stop\":\"signal\"}\n{\"event\":\"epoch\",\"epoch\":3}\n"
                  "{\"event\":\"done\",\"stop\":\"patience\",\"epochs\":7,\"best_epoch\":4}\n");
  auto done = run_bash(kLib + "l=$(finished_done_line '" + log + "'); json_get \"$l\" epochs; echo\n");
  CHECK(done.out == "7\n");
  write_text(log, "{\"event\":\"qtype\",\"subset\":\"single_region\",\"qtype\":\"where\",\"nll\":0.5}\n"
                  "{\"event\":\"qtype\",\"subset\":\"multi_region\",\"qtype\":\"how_many\",\"nll\":1.5}\n"
                  "{\"event\":\"subset\",\"subset\":\"single_region\",\"qtype\":\"where\",\"nll\":0.5}\n"
                  "{\"attn\":\"soft\",\"nll\":0.75}\n");
  auto rows = run_bash(kLib + "for w in all single_region how_many where what_at; do"
                              " json_get \"$(vqa_eval_row '" + log + "' $w)\" nll; echo; done\n");
  CHECK(rows.out == "0.75\n0.5\n1.5\n0.5\n\n");
  std::remove(log.c_str());
}

TEST_CASE("vqa-table1 --table-only tabulates the finished runs, '–' for the rest, and trains nothing") {
  TempDir tmp("exp_vqa_table_only");
  const std::string root = tmp.file("vqa"), data = root + "/default/data", logs = root + "/default/logs";
  REQUIRE(run_bash("mkdir -p " + data + " " + logs + "\n").code == 0);
  write_text(data + "/meta.tsv", "test_majority_accuracy\t0.25\ntest_question_only_oracle\t0.5\n");
  write_text(data + "/test.questions.tsv", "# header\nq1\nq2\n");
  write_text(logs + "/soft-s1.train.jsonl", "{\"event\":\"epoch\",\"epoch\":1}\n"
                                            "{\"event\":\"done\",\"stop\":\"patience\",\"epochs\":5,\"steps\":50,"
                                            "\"best_epoch\":2,\"seconds\":90}\n");
  write_text(logs + "/soft-s1.eval.jsonl",
             "{\"event\":\"qtype\",\"subset\":\"single_region\",\"qtype\":\"where\",\"questions\":2,\"nll\":0.25,"
             "\"accuracy\":0.5}\n"
             "{\"event\":\"subset\",\"subset\":\"single_region\",\"qtype\":\"where\",\"questions\":2,\"nll\":0.25,"
             "\"accuracy\":0.5}\n"
             "{\"attn\":\"soft\",\"questions\":2,\"nll\":0.125,\"accuracy\":0.75,\"elbo\":-0.125,\"kl_gap\":0}\n");
  // marginal never ran, and a lava that cannot run shows that nothing is trained or evaluated.
  const CliResult r = run_bash("LAVA=/nonexistent experiments/vqa-table1.sh --out " + root +
                               " --table-only --mix 'default vqa2' --seed 1 --variants 'soft marginal'\n");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string table = slurp(root + "/table.md");
  CHECK(table == r.out);
  CHECK(table.find("## Mix `default`: 2 test questions") != std::string::npos);
  CHECK(table.find("vqa2") == std::string::npos);  // no data built for it: left out
  CHECK(table.find("| Soft Attention | log p(y \\| E[z]) | – | 0.125 |") != std::string::npos);
  CHECK(table.find("| 75.00 |") != std::string::npos);
  CHECK(table.find("| patience ×1 | 5.0 | 50 | 2.0 |") != std::string::npos);
  CHECK(table.find("| Marginal Likelihood | log E[p] | Enum | – |") != std::string::npos);
  CHECK(table.find("| where | single_region | 2 | 50.0 (0.250) | – (–) |") != std::string::npos);
  CHECK(slurp(root + "/table.jsonl").find("\"variant\":\"marginal\"") != std::string::npos);
  // With no mix built at all: one line, non-zero.
  const CliResult none = run_bash("LAVA=/nonexistent experiments/vqa-table1.sh --out " + tmp.file("empty") +
                                  " --table-only\n");
  CHECK(none.code != 0);
  CHECK(none.err_lines() == 1);
  CHECK(none.err.find("--table-only") != std::string::npos);
}

TEST_CASE("nmt-table1 --table-only leaves the folder of a running invocation alone: binary, settings, corpus") {
  TempDir tmp("exp_nmt_table_only");
  const std::string out = tmp.file("nmt");
  REQUIRE(run_bash("mkdir -p " + out + "/models " + out + "/logs " + out + "/corpus\n").code == 0);
  // What a running invocation pinned and wrote (stand-ins: the script must not read, run or replace them).
  write_text(out + "/lava", "the pinned binary\n");
  write_text(out + "/settings.txt", "mode: converged\n  --attn soft: seeds 1\nthreads: 1, jobs: 2\n");
  write_text(out + "/corpus/train.de", "ein satz\n");
  write_text(out + "/logs/soft-s1.train.jsonl",
             "{\"event\":\"done\",\"stop\":\"patience\",\"epochs\":4,\"steps\":40,\"best_epoch\":2,\"seconds\":60}\n");
  write_text(out + "/logs/soft-s1.eval.jsonl", "{\"attn\":\"soft\",\"ppl\":16.5,\"bleu\":20.25}\n");
  const CliResult r = run_bash("LAVA=/nonexistent experiments/nmt-table1.sh --out " + out + " --data " +
                               tmp.file("no-such-data") + " --variants 'soft marginal' --table-only\n");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(slurp(out + "/lava") == "the pinned binary\n");
  CHECK(slurp(out + "/settings.txt") == "mode: converged\n  --attn soft: seeds 1\nthreads: 1, jobs: 2\n");
  CHECK(slurp(out + "/corpus/train.de") == "ein satz\n");
  CHECK(r.out.find("| `soft` | 16.50 |") != std::string::npos);
  CHECK(r.out.find("| `marginal` | – |") != std::string::npos);
}

TEST_CASE("seed_cell averages the seeds' test rows or training done lines; run_lava logs each run's wall time") {
  TempDir tmp("exp_seed_cell");
  const std::string p = tmp.file("soft-s");
  write_text(p + "1.eval.jsonl", "{\"event\":\"progress\"}\n{\"attn\":\"soft\",\"ppl\":10}\n");
  write_text(p + "2.eval.jsonl", "{\"attn\":\"soft\",\"ppl\":12}\n");
  write_text(p + "1.train.jsonl", "{\"event\":\"epoch\",\"steps\":5}\n{\"event\":\"done\",\"steps\":40}\n");
  const CliResult r = run_bash(kLib + "seed_cell %.1f '" + p + "' eval.jsonl ppl 1 2 3; echo;"
                                      " seed_cell %.0f '" + p + "' train.jsonl steps 1 2; echo\n");
  CHECK(r.code == 0);
  CHECK(r.out == "11.0 ± 1.4\n40\n");
  // run_lava: the command line in COMMANDS_LOG, and its wall seconds, exit status, subcommand and output file in
  // COMMANDS_LOG.times once it has finished.
  const std::string log = tmp.file("commands.txt"), out = tmp.file("o.jsonl");
  const CliResult ran = run_bash(kLib + "LAVA=true COMMANDS_LOG='" + log + "' run_lava '" + out + "' '" +
                                 tmp.file("e.log") + "' eval --model m\n");
  CHECK(ran.code == 0);
  CHECK(slurp(log) == "true eval --model m \n");
  const std::string times = slurp(log + ".times");
  CHECK(times.find("\t0\teval\t" + out + "\n") != std::string::npos);
  CHECK(std::stod(times) < 5);
}

TEST_CASE("paper-tables --tables-only: Table 2 over the seeds with a K-max evaluation; the run-hours of the runs") {
  TempDir tmp("exp_paper_compute");
  const std::string out = tmp.file("pt"), logs = out + "/nmt/logs";
  REQUIRE(run_bash("mkdir -p " + logs + "\n").code == 0);
  write_text(out + "/nmt/settings.txt",
             "mode: converged\n  --attn soft: seeds 1 2 3\n  --attn marginal: seeds 1 2\nthreads: 1, jobs: 2\n");
  // Table 2: marginal's K-max evaluation exists for seed 1 only, so both its columns are seed 1's figures.
  write_text(logs + "/marginal-s1.eval.jsonl", "{\"attn\":\"marginal\",\"ppl\":12,\"bleu\":20}\n");
  write_text(logs + "/marginal-s2.eval.jsonl", "{\"attn\":\"marginal\",\"ppl\":14,\"bleu\":22}\n");
  write_text(logs + "/marginal-s1.k5.bleu.jsonl", "{\"attn\":\"marginal\",\"ppl\":13.5,\"bleu\":19.5,\"kmax\":5}\n");
  for (const char* s : {"1", "2"}) write_text(logs + "/soft-s" + s + ".eval.jsonl", "{\"attn\":\"soft\",\"ppl\":16}\n");
  write_text(logs + "/soft-s1.train.jsonl",
             "{\"event\":\"done\",\"stop\":\"patience\",\"steps\":40,\"seconds\":1800}\n");
  write_text(logs + "/soft-s2.train.jsonl", "{\"event\":\"done\",\"stop\":\"epochs\",\"steps\":60,\"seconds\":5400}\n");
  // seed 3 was stopped by a signal: not finished, not counted
  write_text(logs + "/soft-s3.train.jsonl", "{\"event\":\"stopped\",\"signal\":\"SIGTERM\",\"steps\":7}\n");
  // two timed evaluations, one failed one (not counted), one of the VQA task (its own row)
  write_text(out + "/commands.txt.times", "360.0\t0\teval\t" + logs + "/soft-s1.eval.jsonl\n720.0\t0\teval\t" + logs +
                                              "/soft-s2.eval.jsonl\n99\t1\teval\t" + logs + "/x.jsonl\n36\t0\teval\t" +
                                              out + "/vqa/default/logs/soft-s1.eval.jsonl\n");
  const CliResult r = run_bash("LAVA=" + lava_bin() + " experiments/paper-tables.sh --out " + out +
                               " --tables-only --no-vqa\n");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string tables = slurp(out + "/tables.md");
  CHECK(tables.find("| nmt | 2 | 100 | 2.00 | 2 | 0.30 |") != std::string::npos);
  CHECK(tables.find("| vqa | 0 | 0 | 0.00 | 1 | 0.01 |") != std::string::npos);
  CHECK(tables.find("| `marginal` | 12.00 | 13.50 | 6.34 / 6.90 | 20.00 | 19.50 | 33.29 / 33.31 | 1/2 |") !=
        std::string::npos);
}
