// Sweep files at their limits: seeds at the top of int64 and below zero, a byte-order mark, grid sizes whose product
// passes the run limit (or int64), threads as a grid key or edited after runs finished, every value the Slurm script
// holds, and a run whose metrics cannot be written.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "report/run_record.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "sweep/run_exec.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

using namespace lava;

namespace {

std::set<std::string> train_options(const std::string&) {
  return {"data", "attn", "lr", "epochs", "threads", "logits-cache-mb", "batch-size", "emb-size", "hidden-size"};
}

SweepFile parse(const std::string& text, const std::string& path = "/srv/sw/limits.ini") {
  return parse_sweep_file(path, text, train_options);
}

}  // namespace

TEST_CASE("sweep limits: a seed range at the top of int64 ends; a negative seed is named as such") {
  // `for (s = lo; s <= hi; ++s)` never ends when hi is the largest int64.
  CHECK(parse_seed_list("9223372036854775807-9223372036854775807") == std::vector<int64_t>{INT64_MAX});
  CHECK(parse_seed_list("9223372036854775805-9223372036854775807") ==
        std::vector<int64_t>{INT64_MAX - 2, INT64_MAX - 1, INT64_MAX});
  const std::string p = "/srv/sw/limits.ini";
  check_input_error([&] { parse("seeds = -1\n", p); }, p, "limits.ini:1: seeds: '-1' is not a seed (a whole number >= 0)");
  check_input_error([&] { parse("seeds = -1-3\n", p); }, p, "'-1' is not a seed");
  check_input_error([&] { parse("seeds = 1--3\n", p); }, p, "'-3' is not a seed");
  CHECK(parse("seeds = 2-4\n").seeds == std::vector<int64_t>{2, 3, 4});
}

TEST_CASE("sweep limits: a UTF-8 byte-order mark before the first key is not part of it") {
  const SweepFile f = parse("\xEF\xBB\xBF" "data = corpus\nseeds = 1\n");
  REQUIRE(f.fixed.size() == 1);
  CHECK(f.fixed[0].key == "data");
  // A mark anywhere else is still a character of its key.
  check_input_error([&] { parse("data = corpus\n\xEF\xBB\xBF" "lr = 1\n"); }, "/srv/sw/limits.ini", "limits.ini:2: unknown option");
}

TEST_CASE("sweep limits: more runs than --max-runs allows (or than int64 holds) is one InputError, never a wrap") {
  std::string eight_grids;
  const char* keys[] = {"data", "attn", "lr", "epochs", "batch-size", "emb-size", "hidden-size", "logits-cache-mb"};
  for (const char* k : keys) {
    if (std::string(k) == "logits-cache-mb") continue;
    eight_grids += "grid." + std::string(k) + " = ";
    for (int i = 0; i < 256; ++i) eight_grids += (i ? "," : "") + std::to_string(i);
    eight_grids += "\n";
  }
  eight_grids += "seeds = 1-256\n";  // 256^8 = 2^64: wraps to 0 in 64 bits
  const SweepFile f = parse(eight_grids);
  const std::string p = "/srv/sw/limits.ini";
  check_input_error([&] { expand_sweep(f); }, p, "256 data x 256 attn x ");
  check_input_error([&] { expand_sweep(f); }, p, "256 seeds make more than 10000 runs; --max-runs N allows more");
  check_input_error([&] { sweep_run_count(f, INT64_MAX); }, p, "make more than 9223372036854775807 runs");
  const SweepFile small = parse("grid.attn = a, b, c\ngrid.lr = 1, 2, 3\nseeds = 1-2\n");
  CHECK(sweep_run_count(small, 18) == 18);
  CHECK(expand_sweep(small, 18).size() == 18);
  check_input_error([&] { expand_sweep(small, 17); }, p, "3 attn x 3 lr x 2 seeds make more than 17 runs");
}

TEST_CASE("sweep limits: threads is no grid key, and editing it after the runs were made keeps their directories") {
  const std::string p = "/srv/sw/limits.ini";
  check_input_error([&] { parse("grid.threads = 1, 2\n", p); }, p, "limits.ini:1: \"threads\" cannot be a grid key");
  check_input_error([&] { parse("grid.logits-cache-mb = 1, 2\n", p); }, p, "cannot be a grid key");

  TempDir d("sweep_threads");
  const std::string path = d.file("t.ini");
  const SweepFile one = parse("data = corpus\nthreads = 1\nseeds = 1\n", path);
  const SweepRun run = expand_sweep(one)[0];
  prepare_run_dir(one, run);
  CHECK(slurp(run.dir + "/config.ini").find("threads = 1\n") != std::string::npos);
  // threads changed: the same run (same id), and its config.ini takes the new value.
  const SweepFile two = parse("data = corpus\nthreads = 2\nseeds = 1\n", path);
  REQUIRE(expand_sweep(two)[0].id == run.id);
  prepare_run_dir(two, expand_sweep(two)[0]);
  CHECK(slurp(run.dir + "/config.ini") == "task = nmt\ndata = corpus\nthreads = 2\nseed = 1\n");
  // An option that changes results, edited under the same directory, is still refused.
  write_text(run.dir + "/config.ini", "task = nmt\ndata = other\nthreads = 2\nseed = 1\n");
  check_input_error([&] { prepare_run_dir(two, expand_sweep(two)[0]); }, run.dir + "/config.ini", "holds other options");
}

TEST_CASE("sweep limits: the Slurm script quotes or refuses every value: newline, %, quotes") {
  TempDir d("sweep_slurm_values");
  const std::string dir = d.file("100%_sure");
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/job\ntouch PWNED\n#.ini";
  SlurmOptions o;
  o.lava = "/opt/lava";
  {
    // out has no newline: the script is written, the file's path shell-quoted, the directory's % doubled.
    const SweepFile f = parse("data = corpus\nseeds = 1-2\nout = runs\n", file);
    const std::string s = slurm_array_script(f, expand_sweep(f), o);
    CHECK(s.find('\n' + std::string("touch PWNED")) == std::string::npos);
    CHECK(s.find("#SBATCH --job-name=job_touch_PWNED__\n") != std::string::npos);
    CHECK(s.find("#SBATCH --output=" + d.file("100%%_sure") + "/runs/slurm/%A_%a.out\n") != std::string::npos);
    CHECK(s.find("# lava sweep: 2 runs of '" + dir + "/job\\ntouch PWNED\\n#.ini'\n") != std::string::npos);
    // bash's $'...': no line of the script is cut by the path's newlines.
    CHECK(s.find("exec /opt/lava sweep exec $'" + dir + "/job\\ntouch PWNED\\n#.ini' --run \"$run\"") != std::string::npos);
  }
  // The default out is the file's name plus .runs: a newline in an #SBATCH line cannot be quoted, so it is refused.
  const SweepFile f = parse("data = corpus\nseeds = 1\n", file);
  check_input_error([&] { slurm_array_script(f, expand_sweep(f), o); }, "job\\ntouch PWNED", "cannot go into an #SBATCH line");
  const SweepFile plain = parse("data = corpus\nseeds = 1\n");
  for (const char* bad : {"a b", "a\"b", "x%j", "a\nb", "it's"}) {
    SlurmOptions q = o;
    q.partition = bad;
    CHECK_THROWS_AS(slurm_array_script(plain, expand_sweep(plain), q), InputError);
    CHECK_FALSE(sbatch_safe(bad));
  }
  CHECK(sbatch_safe("01:00:00"));
}

TEST_CASE("sweep limits: a run whose metrics cannot be written failed; the error names the run's file, not stdout") {
  if (!std::filesystem::exists("/dev/full")) return;
  TempDir d("sweep_metrics_full");
  const SweepFile f = parse("data = corpus\nseeds = 1\n", d.file("full.ini"));
  const SweepRun r = expand_sweep(f)[0];
  prepare_run_dir(f, r);
  // metrics.jsonl is /dev/full: every write fails with ENOSPC, as on a full disk.
  std::filesystem::create_symlink("/dev/full", r.dir + "/metrics.jsonl");
  std::fflush(stdout);
  const int rc = run_sweep_task(f, r, {}, [](std::vector<std::string>) {
    std::printf("{\"event\":\"done\",\"valid_ppl\":3}\n");
    return 0;
  });
  CHECK(rc == 1);
  CHECK(read_run_status(r.dir).state == RunState::failed);
  CHECK_FALSE(std::ferror(stdout));  // main() would otherwise report "standard output: cannot write"
  CHECK_NOTHROW(check_stdout());
  CHECK(slurp(r.dir + "/train.log").find(r.dir + "/metrics.jsonl': cannot write") != std::string::npos);
}

TEST_CASE("cli: sweep limits through lava itself: seed range at int64's top, -1, a BOM, 256^8 runs, grid.threads") {
  TempDir d("sweep_limits_cli");
  auto plan = [&](const std::string& name, const std::string& text, const std::string& more = "") {
    write_text(d.file(name), text);
    // Bounded: a seed range at int64's top must end, not wrap past INT64_MAX and run until memory runs out.
    return run_captured(memory_limit(4000000) + "timeout 30 " + lava_bin() + " sweep plan " + d.file(name) + " " + more);
  };
  CliResult r = plan("top.ini", "data = corpus\nseeds = 9223372036854775807-9223372036854775807\n");
  CHECK(r.code == 0);
  CHECK(r.err_lines() == 0);
  CHECK(lines_of(r.out).size() == 1);
  r = plan("minus.ini", "data = corpus\nseeds = -1\n");
  CHECK(r.code == 1);
  CHECK(r.err == "lava sweep: " + d.file("minus.ini") + ":2: seeds: '-1' is not a seed (a whole number >= 0)\n");
  r = plan("bom.ini", "\xEF\xBB\xBF" "data = corpus\n");
  CHECK(r.code == 0);
  CHECK(r.err_lines() == 0);
  std::string grids = "data = corpus\n";
  for (const char* k : {"lr", "epochs", "batch-size", "emb-size", "hidden-size", "attn-size", "dropout"}) {
    grids += std::string("grid.") + k + " = ";
    for (int i = 1; i <= 256; ++i) grids += (i > 1 ? "," : "") + std::to_string(i);
    grids += "\n";
  }
  r = plan("huge.ini", grids + "seeds = 1-256\n");  // 256^8 = 2^64 runs: 0 in 64 bits
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("256 seeds make more than 10000 runs; --max-runs N allows more") != std::string::npos);
  r = plan("wide.ini", "data = corpus\ngrid.lr = 1,2,3,4,5,6,7,8,9,10,11\nseeds = 1-1000\n");
  CHECK(r.code == 1);
  CHECK(r.err.find("11 lr x 1000 seeds make more than 10000 runs") != std::string::npos);
  r = plan("wide.ini", "data = corpus\ngrid.lr = 1,2,3,4,5,6,7,8,9,10,11\nseeds = 1-1000\n", "--max-runs 11000");
  CHECK(r.code == 0);
  CHECK(lines_of(r.out).size() == 11000);
  CHECK(r.out.find(" --max-runs 11000\n") != std::string::npos);  // each exec expands the sweep with the same limit
  // Seeds past 2^53 keep every digit in every format of sweep plan (a double would make these two one seed).
  for (const char* format : {"json", "csv"}) {  // the plain format lists commands, not seeds
    r = plan("big.ini", "data = corpus\nseeds = 9007199254740993, 9007199254740992\n", std::string("--format ") + format);
    CAPTURE(format);
    CHECK(r.code == 0);
    CHECK(r.out.find("9007199254740993") != std::string::npos);
    CHECK(r.out.find("9007199254740992") != std::string::npos);
  }
  r = plan("threads.ini", "data = corpus\ngrid.threads = 1, 2\n");
  CHECK(r.code == 1);
  CHECK(r.err.find("threads.ini:2: \"threads\" cannot be a grid key") != std::string::npos);
}

TEST_CASE("cli: editing threads after runs were made does not break the sweep; a full disk fails the run") {
  TempDir d("sweep_threads_cli");
  write_text(d.file("t.ini"), "data = corpus\nthreads = 1\nseeds = 1-2\n");
  REQUIRE(run_lava("sweep slurm " + d.file("t.ini")).code == 0);  // makes the run directories and config.ini
  write_text(d.file("t.ini"), "data = corpus\nthreads = 2\nseeds = 1-2\n");
  const CliResult r = run_lava("sweep slurm " + d.file("t.ini"));
  INFO(r.err);
  CHECK(r.code == 0);

  // A run whose metrics.jsonl cannot be written (here /dev/full: ENOSPC on every write) is no finished run.
  if (!std::filesystem::exists("/dev/full")) return;
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 40 --valid 8 --test 4 --vocab 20 -q").code == 0);
  write_text(d.file("full.ini"), "data = synth\nepochs = 1\nbatch-size = 8\nemb-size = 8\nhidden-size = 8\n"
                                 "attn-size = 8\ninf-hidden = 8\nseeds = 1\n");
  const std::string plan = run_lava("sweep plan " + d.file("full.ini")).out;
  const std::string id = plan.substr(plan.rfind(' ') + 1, 16);
  const std::string dir = d.file("full.runs/" + id);
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("/dev/full", dir + "/metrics.jsonl");
  const CliResult e = run_lava("sweep exec " + d.file("full.ini") + " --run " + id);
  CHECK(e.code == 1);
  CHECK(slurp(dir + "/status.json").find("\"state\":\"failed\"") != std::string::npos);
  CHECK(e.err.find(dir + "/metrics.jsonl': cannot write") != std::string::npos);
  CHECK(e.err.find("standard output") == std::string::npos);
}
