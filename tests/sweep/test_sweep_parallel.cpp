// lava sweep run through GNU parallel on tiny translation runs: every run finishes, a second run skips them all,
// a run stopped by SIGTERM mid-training resumes and ends with the uninterrupted sweep's table bit for bit, and a
// run that fails is a row naming its log. Skipped where GNU parallel is not installed.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "support/cli_runner.hpp"
#include "support/skip_unless.hpp"
#include "support/temp_dir.hpp"

namespace {

// 200 pairs, 13 batches an epoch, 12 epochs: long enough to be stopped in the middle, short under the sanitizers.
// Two seeds of one grid point: the row's mean ± sd goes through the whole pipeline.
std::string sweep_text(const std::string& out, int epochs) {
  return "data = synth\nepochs = " + std::to_string(epochs) +
         "\nbatch-size = 16\nemb-size = 16\nhidden-size = 16\nattn-size = 16\ninf-hidden = 16\n"
         "grid.attn = soft\nseeds = 1-2\nout = " + out + "\n";
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("cli: lava sweep run (GNU parallel): finish, skip, resume a stopped run to the same table, show failures" *
          skip_unless_program("parallel")) {
  TempDir d("sweep_parallel");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 200 --valid 20 --test 10 --vocab 40 -q").code == 0);
  write_text(d.file("a.ini"), sweep_text("a", 12));
  write_text(d.file("b.ini"), sweep_text("b", 12));

  CliResult r = run_lava("sweep run " + d.file("a.ini") + " --jobs 2");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(count(r.out, ": finished\n") == 2);
  r = run_lava("sweep run " + d.file("a.ini") + " --jobs 2");
  CHECK(r.code == 0);
  CHECK(r.err.find("2 finished before, 0 to run") != std::string::npos);

  // Sweep b: its first run is stopped by SIGTERM after its first epoch, then lava sweep run finishes it.
  const std::string plan = run_lava("sweep plan " + d.file("b.ini")).out;
  const std::string first = plan.substr(0, plan.find('\n'));
  const std::string id = first.substr(first.rfind(' ') + 1);
  const std::string run_dir = d.file("b/" + id);
  const std::string stop = first + " >/dev/null 2>&1 & pid=$!; n=0; until grep -q '\"event\":\"epoch\"' " + run_dir +
                           "/metrics.jsonl 2>/dev/null || [ $n -gt 2000 ]; do sleep 0.01; n=$((n+1)); done; "
                           "kill -TERM $pid; wait $pid; echo $?";
  FILE* p = popen(stop.c_str(), "r");
  REQUIRE(p);
  char buf[64] = {};
  REQUIRE(std::fgets(buf, sizeof buf, p));
  pclose(p);
  CHECK(std::string(buf) == "143\n");
  CHECK(slurp(run_dir + "/status.json").find("\"state\":\"stopped\"") != std::string::npos);
  r = run_lava("report " + d.file("b"));
  CHECK(r.out.find("stopped (SIGTERM), resumable") != std::string::npos);
  r = run_lava("sweep run " + d.file("b.ini") + " --jobs 2");
  REQUIRE(r.code == 0);
  const std::string log = slurp(run_dir + "/train.log");
  CHECK(log.find("session 2 on ") != std::string::npos);
  CHECK(log.find(": resuming from " + run_dir + "/model.safetensors.resume") != std::string::npos);

  const std::string metrics = " --metrics ppl,elbo,kl,kl_gap";
  for (const char* format : {"csv", "table", "json"}) {
    const CliResult ra = run_lava("report " + d.file("a") + metrics + " --format " + format);
    const CliResult rb = run_lava("report " + d.file("b") + metrics + " --format " + format);
    CHECK(ra.code == 0);
    CHECK(ra.out == rb.out);
    CHECK(count(ra.out, "\n") == (std::string(format) == "table" ? 3 : std::string(format) == "csv" ? 2 : 1));
  }

  // A run that cannot train fails, is counted, and its row names its log (which holds lava train's error).
  write_text(d.file("c.ini"), "data = synth\nepochs = 1\nemb-size = 8\nhidden-size = 8\ngrid.attn = soft, no-such\n");
  r = run_lava("sweep run " + d.file("c.ini") + " --jobs 2");
  CHECK(r.code == 1);
  CHECK(r.err.find("1 finished, 1 failed") != std::string::npos);
  r = run_lava("report " + d.file("c.runs") + " --format csv");
  CHECK(r.code == 0);
  CHECK(r.out.find(",1,1,") != std::string::npos);
  const size_t failed = r.out.find("no-such,1,0,nan,nan,nan,nan,failed (exit 2),");
  REQUIRE(failed != std::string::npos);
  const std::string failed_log = r.out.substr(r.out.rfind(',') + 1, r.out.size() - r.out.rfind(',') - 2);
  CHECK(slurp(failed_log).find("no-such") != std::string::npos);

  // A run whose lock another process holds (here flock(1)) is not trained twice: one line naming the lock, exit 1.
  const std::string failed_dir = failed_log.substr(0, failed_log.rfind('/'));
  const std::string failed_id = failed_dir.substr(failed_dir.rfind('/') + 1);
  const std::string held = "flock " + failed_dir + "/lock " + lava_bin() + " sweep exec " + d.file("c.ini") +
                           " --run " + failed_id + " 2>&1";
  FILE* q = popen(held.c_str(), "r");
  REQUIRE(q);
  std::string out;
  for (int ch; (ch = std::fgetc(q)) != EOF;) out += char(ch);
  const int status = pclose(q);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(out == "lava sweep: " + failed_dir + "/lock: run " + failed_id + " is running in another process (which holds this lock)\n");
}
