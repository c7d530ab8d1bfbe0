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

const std::vector<std::string> kScripts = {"nmt-length", "families", "seqvae-collapse", "synth-aer"};

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

