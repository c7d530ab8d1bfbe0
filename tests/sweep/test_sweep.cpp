// Sweep files: expansion into runs with stable ids; one InputError naming file:line for an unknown option, an empty
// grid, a duplicate key and bad seeds; lava sweep plan's exit codes for them.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/check.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

using namespace lava;

namespace {

// The registry's contract: the options of a task, a UsageError for a name that is none.
std::set<std::string> fake_train_options(const std::string& task) {
  if (task != "nmt" && task != "vqa") throw UsageError("unknown task '" + task + "' (nmt, vqa)");
  return {"task", "data", "attn", "lr", "epochs", "threads", "hidden-size", "save", "seed"};
}

SweepFile parse(const std::string& text, const std::string& path = "/srv/sw/attn.ini") {
  return parse_sweep_file(path, text, fake_train_options);
}

}  // namespace

TEST_CASE("sweep: grids times seeds, first grid outermost, seeds innermost, every run's exact options") {
  const SweepFile f = parse("# a comment\ndata = corpus  # trailing comment\n\ngrid.attn = soft, marginal,var-enum\n"
                            "grid.lr = 1e-3, 3e-3\nseeds = 1-2, 5\n");
  CHECK(f.task == "nmt");
  CHECK(f.out == "/srv/sw/attn.runs");
  CHECK(f.seeds == std::vector<int64_t>{1, 2, 5});
  const std::vector<SweepRun> runs = expand_sweep(f);
  REQUIRE(runs.size() == 3 * 2 * 3);
  CHECK(runs[0].grid == std::vector<std::pair<std::string, std::string>>{{"attn", "soft"}, {"lr", "1e-3"}});
  CHECK(runs[0].seed == 1);
  CHECK(runs[2].seed == 5);
  CHECK(runs[3].grid[1].second == "3e-3");
  CHECK(runs[6].grid[0].second == "marginal");
  CHECK(runs[17].grid == std::vector<std::pair<std::string, std::string>>{{"attn", "var-enum"}, {"lr", "3e-3"}});
  CHECK(run_config_text(runs[4]) == "task = nmt\ndata = corpus\nattn = soft\nlr = 3e-3\nseed = 2\n");
  std::set<std::string> ids;
  for (const SweepRun& r : runs) {
    ids.insert(r.id);
    CHECK(r.id.size() == 16);
    CHECK(r.dir == "/srv/sw/attn.runs/" + r.id);
  }
  CHECK(ids.size() == runs.size());
}

TEST_CASE("sweep: a run's id is a hash of its options, not of their order, its index or the thread count") {
  const std::vector<SweepRun> a = expand_sweep(parse("data = c\ngrid.attn = soft, marginal\nseeds = 1-2\n"));
  const std::vector<SweepRun> b =
      expand_sweep(parse("threads = 2\ngrid.attn = marginal, soft\nseeds = 2, 1\ndata = c\nout = elsewhere\n"));
  std::set<std::string> ia, ib;
  for (const SweepRun& r : a) ia.insert(r.id);
  for (const SweepRun& r : b) ib.insert(r.id);
  CHECK(ia == ib);
  CHECK(a[0].id == b[3].id);  // attn=soft seed=1 in both
  // One value changed: another id.
  const std::vector<SweepRun> c = expand_sweep(parse("data = d\ngrid.attn = soft, marginal\nseeds = 1-2\n"));
  CHECK(c[0].id != a[0].id);
  // FNV-1a 64 of the sorted lines, computed here independently: "a=1\n" then "b=2\n".
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : std::string("a=1\nb=2\n")) h = (h ^ ch) * 0x100000001b3ull;
  CHECK(run_id({{"b", "2"}, {"a", "1"}}) == fmt::format("{:016x}", h));
}

TEST_CASE("sweep: bad sweep files are one InputError naming file:line") {
  const std::string p = "/srv/sw/bad.ini";
  auto bad = [&](const std::string& text, const std::string& needle) {
    check_input_error([&] { parse(text, p); }, p, needle);
  };
  bad("data = c\nattn = soft\nwarp = 9\n", "bad.ini:3: unknown option \"warp\"");
  bad("data = c\ngrid.warp = 1, 2\n", "bad.ini:2: unknown option \"warp\"");
  bad("data = c\n\ngrid.attn =\n", "bad.ini:3: empty grid \"grid.attn\"");
  bad("grid.attn = soft, , marginal\n", "bad.ini:1: grid \"grid.attn\" has an empty value");
  bad("grid.attn = soft, soft\n", "lists \"soft\" twice");
  bad("data = c\nlr = 1\nlr = 2\n", "bad.ini:3: duplicate key \"lr\" (first set at line 2)");
  bad("attn = soft\ngrid.attn = soft, marginal\n", "bad.ini:2: duplicate key \"attn\" (first set at line 1)");
  bad("seeds = 1\nseeds = 2\n", "bad.ini:2: duplicate key \"seeds\"");
  bad("seeds = 3-1\n", "bad.ini:1: seeds: '3-1' is an empty range");
  bad("seeds = 1, x\n", "bad.ini:1: seeds: 'x' is not a seed");
  bad("seeds = 1-3, 2\n", "seed 2 appears twice");
  bad("save = m\n", "bad.ini:1: \"save\" is set by the sweep");
  bad("seed = 4\n", "use seeds = LIST");
  bad("data c\n", "bad.ini:1: expected key = value");
  bad("[train]\n", "bad.ini:1: unknown section '[train]'");
  bad("task = nope\n", "bad.ini:1: unknown task 'nope' (nmt, vqa)");
  bad("grid.task = nmt, vqa\n", "\"task\" cannot be a grid key");
}

TEST_CASE("sweep: the Slurm script is an array with one task per run, requeue-safe, and execs lava") {
  const SweepFile f = parse("data = c\ngrid.attn = soft, marginal\nseeds = 1-2\n");
  const std::vector<SweepRun> runs = expand_sweep(f);
  SlurmOptions o;
  o.cpus = 2, o.mem = "2G", o.time = "01:00:00", o.partition = "short", o.max_running = 3, o.lava = "/opt/lava bin/lava";
  const std::string s = slurm_array_script(f, runs, o);
  for (const char* line : {"#SBATCH --array=0-3%3\n", "#SBATCH --output=/srv/sw/attn.runs/slurm/%A_%a.out\n",
                                  "#SBATCH --requeue\n", "#SBATCH --signal=B:TERM@60\n", "#SBATCH --cpus-per-task=2\n",
                                  "#SBATCH --mem=2G\n", "#SBATCH --time=01:00:00\n", "#SBATCH --partition=short\n",
                                  "#SBATCH --open-mode=append\n"})
    CHECK_MESSAGE(s.find(line) != std::string::npos, line);
  CHECK(s.find("runs=(" + runs[0].id + " " + runs[1].id + " " + runs[2].id + " " + runs[3].id + ")\n") != std::string::npos);
  CHECK(s.find("exec '/opt/lava bin/lava' sweep exec /srv/sw/attn.ini --run \"$run\"") != std::string::npos);
}

TEST_CASE("cli: lava sweep plan: one command per run; a bad sweep file is one line naming file:line, exit 1") {
  TempDir d("sweep_plan");
  write_text(d.file("ok.ini"), "data = corpus\ngrid.attn = soft, marginal\nseeds = 1-3\n");
  CliResult r = run_lava("sweep plan " + d.file("ok.ini"));
  CHECK(r.code == 0);
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 6);
  CHECK(r.out.find(" sweep exec " + d.file("ok.ini") + " --run ") != std::string::npos);

  // Real option lists from lava train --task T --help: hidden-size is nmt's, features is vqa's only.
  write_text(d.file("unknown.ini"), "data = corpus\nfeatures = f\ngrid.attn = soft\n");
  r = run_lava("sweep plan " + d.file("unknown.ini"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(d.file("unknown.ini") + ":2: unknown option \"features\" for lava train --task nmt") != std::string::npos);
  write_text(d.file("vqa.ini"), "task = vqa\ndata = corpus\nfeatures = f\n");
  CHECK(run_lava("sweep plan " + d.file("vqa.ini")).code == 0);

  write_text(d.file("empty.ini"), "data = corpus\ngrid.lr = \n");
  r = run_lava("sweep plan " + d.file("empty.ini"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(d.file("empty.ini") + ":2: empty grid") != std::string::npos);

  write_text(d.file("dup.ini"), "data = corpus\nepochs = 2\ngrid.epochs = 1, 2\n");
  r = run_lava("sweep plan " + d.file("dup.ini"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(d.file("dup.ini") + ":3: duplicate key \"epochs\"") != std::string::npos);

  r = run_lava("sweep plan " + d.file("missing.ini"));
  CHECK(r.code == 1);
  CHECK(r.err.find(d.file("missing.ini")) != std::string::npos);
  r = run_lava("sweep plan");
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  r = run_lava("sweep fly " + d.file("ok.ini"));
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
}
