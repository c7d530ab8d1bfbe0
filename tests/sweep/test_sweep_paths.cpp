// Sweep paths that hold shell syntax (a newline, `$'job\ntouch PWNED\n#.ini'`, %, {}) run through GNU parallel
// and through the generated Slurm script executed by bash: the runs train and nothing outside lava runs. And
// `lava sweep run` killed (SIGKILL) or hung up (SIGHUP) leaves no process behind and starts no further run.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "support/cli_runner.hpp"
#include "support/skip_unless.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

// `s` in single quotes for sh (a newline inside them is kept).
std::string sq(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string tiny_sweep(const std::string& synth, const std::string& extra) {
  return "data = " + synth + "\nepochs = 1\nbatch-size = 8\nemb-size = 8\nhidden-size = 8\nattn-size = 8\n"
         "inf-hidden = 8\n" + extra;
}

// Every file named PWNED or INJECTED under `dir`: the marks of a command that ran outside lava.
std::vector<std::string> marks(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename() == "PWNED" || e.path().filename() == "INJECTED") found.push_back(e.path().string());
  return found;
}

// The pids of processes whose command line mentions `needle` (a test's unique directory).
std::vector<pid_t> processes_mentioning(const std::string& needle) {
  std::vector<pid_t> pids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stol(name) == ::getpid()) continue;
    std::string cmd = slurp(e.path().string() + "/cmdline");
    for (char& c : cmd) c = c ? c : ' ';
    if (cmd.find(needle) != std::string::npos) pids.push_back(pid_t(std::stol(name)));
  }
  return pids;
}

}  // namespace

TEST_CASE("cli: sweep paths with shell syntax through GNU parallel run the runs and nothing else" *
          skip_unless_program("parallel")) {
  TempDir d("sweep_paths_parallel");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 40 --valid 8 --test 4 --vocab 20 -q").code == 0);
  const std::string dir = d.file("exp\necho INJECTED >&2; touch INJECTED;#100%_{}");
  fs::create_directories(dir);
  const std::string file = dir + "/job\ntouch PWNED\n#.ini";
  write_text(file, tiny_sweep(d.file("synth"), "seeds = 1-2\n"));
  const CliResult r = run_captured("cd " + sq(dir) + " && " + lava_bin() + " sweep run " + sq(file) + " --jobs 2");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(marks(d.dir).empty());
  CHECK(r.err.find("INJECTED\n") == std::string::npos);
  CHECK(r.err.find("2 finished, 0 failed") != std::string::npos);
  // Its closing line quotes the runs directory: one line, the newlines escaped.
  CHECK(r.err.find("lava report '" + d.file("exp\\necho INJECTED >&2; touch INJECTED;#100%_{}") + "/job\\ntouch PWNED\\n#.runs'\n") !=
        std::string::npos);

  // sweep plan's one-command-per-line output cannot hold the path; its json can.
  const CliResult plan = run_lava("sweep plan " + sq(file));
  CHECK(plan.code == 1);
  CHECK(plan.out.empty());
  CHECK(plan.err_lines() == 1);
  CHECK(plan.err.find("a newline in this path cannot be printed as one command per line") != std::string::npos);
  const CliResult json = run_lava("sweep plan " + sq(file) + " --format json");
  CHECK(json.code == 0);
  CHECK(lines_of(json.out).size() == 2);
  CHECK(marks(d.dir).empty());
}

TEST_CASE("cli: the Slurm script of such a sweep, run by bash, trains the run and nothing else") {
  TempDir d("sweep_paths_slurm");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 40 --valid 8 --test 4 --vocab 20 -q").code == 0);
  const std::string dir = d.file("100%_sure");
  fs::create_directories(dir);
  const std::string file = dir + "/job\ntouch PWNED\n#.ini";
  // The default runs directory would carry the newline into #SBATCH --output, where nothing can quote it.
  write_text(file, tiny_sweep(d.file("synth"), "seeds = 1-2\n"));
  CliResult r = run_lava("sweep slurm " + sq(file));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("cannot go into an #SBATCH line") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/job\ntouch PWNED\n#.runs"));

  write_text(file, tiny_sweep(d.file("synth"), "seeds = 1-2\nout = runs%j\n"));
  r = run_lava("sweep slurm " + sq(file));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string script = dir + "/runs%j/sweep.sbatch";
  const std::string text = slurp(script);
  CHECK(text.find("#SBATCH --output=" + d.file("100%%_sure") + "/runs%%j/slurm/%A_%a.out\n") != std::string::npos);
  CHECK(text.find("\ntouch PWNED") == std::string::npos);
  for (const char* task : {"0", "1"}) {
    const CliResult t = run_captured("cd " + sq(dir) + " && SLURM_ARRAY_TASK_ID=" + task + " SLURM_CPUS_PER_TASK=1 bash " + sq(script));
    INFO(t.err);
    CHECK(t.code == 0);
    CHECK(t.out.find(": finished\n") != std::string::npos);
  }
  CHECK(marks(d.dir).empty());
  const CliResult report = run_lava("report " + sq(dir + "/runs%j") + " --format csv --metrics ppl");
  CHECK(report.code == 0);
  REQUIRE(lines_of(report.out).size() == 2);
  CHECK(lines_of(report.out)[1].starts_with("1-2,2,"));
}

TEST_CASE("cli: lava sweep run killed by SIGKILL or SIGHUP leaves no process and starts no further run" *
          skip_unless_program("parallel")) {
  TempDir d("sweep_paths_kill");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 200 --valid 20 --test 10 --vocab 40 -q").code == 0);
  for (int sig : {SIGKILL, SIGHUP}) {
    const std::string name = sig == SIGKILL ? "kill.ini" : "hup.ini";
    // Long runs (400 epochs), three seeds, one at a time: the first is killed mid-training.
    write_text(d.file(name), "data = synth\nepochs = 400\nbatch-size = 16\nemb-size = 16\nhidden-size = 16\n"
                             "attn-size = 16\ninf-hidden = 16\nseeds = 1-3\n");
    const std::string plan = run_lava("sweep plan " + d.file(name)).out;
    const std::string first = d.file(name.substr(0, name.size() - 4) + ".runs/" + plan.substr(plan.find("--run ") + 6, 16));
    FILE* p = popen((lava_bin() + " sweep run " + d.file(name) + " --jobs 1 --threads 1 >/dev/null 2>&1 & echo $!").c_str(), "r");
    REQUIRE(p);
    char buf[32] = {};
    REQUIRE(std::fgets(buf, sizeof buf, p));
    pclose(p);
    const pid_t pid = pid_t(std::atol(buf));
    for (int i = 0; i < 3000 && slurp(first + "/metrics.jsonl").find("\"event\":\"epoch\"") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::kill(pid, sig);
    std::vector<pid_t> left;
    for (int i = 0; i < 200 && !(left = processes_mentioning(d.file(name))).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    INFO(name);
    CHECK(left.empty());
    for (pid_t q : left) ::kill(q, SIGKILL);  // the leftovers of this test only (they name its directory)
    CHECK(slurp(first + "/status.json").find("\"state\":\"stopped\"") != std::string::npos);
    CHECK(fs::exists(first + "/model.safetensors.resume"));
    int started = 0;
    for (const auto& e : fs::directory_iterator(d.file(name.substr(0, name.size() - 4) + ".runs")))
      started += fs::exists(e.path() / "status.json");
    CHECK(started == 1);
  }
}
