// Sweep-file sections: [scale NAME] chosen with --scale, per-row [KEY VALUE] options and seeds, [eval NAME]
// evaluations; the ids they give (evaluations are no part of them); every bad section one InputError FILE:LINE.
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

std::set<std::string> train_options(const std::string& task) {
  if (task != "nmt") throw UsageError("unknown task '" + task + "' (nmt)");
  return {"data", "attn", "lr", "epochs", "threads", "hidden-size", "warm-start", "temperature", "max-len"};
}
std::set<std::string> eval_options(const std::string&) { return {"split", "kmax", "bleu", "beam", "limit", "data", "model"}; }

const std::string kPath = "/srv/sw/table.ini";

SweepFile parse(const std::string& text, const std::string& scale = "") {
  return parse_sweep_file(kPath, text, train_options, scale, eval_options);
}

// A table in the form of experiments/paper/nmt.ini.
const std::string kTable =
    "grid.attn = soft, marginal, var-dirichlet\n"  // 1
    "scale = small\n"                              // 2
    "epochs = 30\n"                                // 3
    "[scale small]\n"                              // 4
    "data = small-corpus\n"                        // 5
    "hidden-size = 128\n"                          // 6
    "out = runs/small\n"                           // 7
    "[scale medium]\n"                             // 8
    "data = bpe\n"                                 // 9
    "hidden-size = 256\n"                          // 10
    "epochs = 20\n"                                // 11
    "[attn soft]\n"                                // 12
    "seeds = 1-3\n"                                // 13
    "[attn var-dirichlet]\n"                       // 14
    "warm-start = 2122\n"                          // 15
    "[scale medium, attn var-dirichlet]\n"         // 16
    "warm-start = 11002\n"                         // 17
    "seeds = 4\n"                                  // 18
    "[eval test]\n"                                // 19
    "split = test\n"                               // 20
    "bleu = true\n"                                // 21
    "[eval kmax5]\n"                               // 22
    "kmax = 5\n"                                   // 23
    "only.attn = marginal\n";                      // 24


}  // namespace

TEST_CASE("sweep sections: a scale replaces and adds options; rows add options and seeds; one scale's row wins") {
  const SweepFile small = parse(kTable);  // scale = small: the default
  CHECK(small.scale == "small");
  CHECK(small.scales == std::vector<std::string>{"small", "medium"});
  CHECK(small.out == "/srv/sw/runs/small");
  const std::vector<SweepRun> runs = expand_sweep(small);
  REQUIRE(runs.size() == 3 + 1 + 1);  // soft seeds 1-3, the others the default seed 1
  CHECK(runs[0].grid[0].second == "soft");
  CHECK(runs[2].seed == 3);
  CHECK(runs[3].grid[0].second == "marginal");
  CHECK(run_config_text(runs[4]) ==
        "task = nmt\nepochs = 30\ndata = small-corpus\nhidden-size = 128\nattn = var-dirichlet\nwarm-start = 2122\nseed = 1\n");

  const SweepFile medium = parse(kTable, "medium");
  CHECK(medium.out == "/srv/sw/table-medium.runs");  // no out in [scale medium]: FILE-SCALE.runs
  const std::vector<SweepRun> m = expand_sweep(medium);
  REQUIRE(m.size() == 5);
  CHECK(run_config_text(m[0]) == "task = nmt\nepochs = 20\ndata = bpe\nhidden-size = 256\nattn = soft\nseed = 1\n");
  CHECK(run_config_text(m[4]) ==
        "task = nmt\nepochs = 20\ndata = bpe\nhidden-size = 256\nattn = var-dirichlet\nwarm-start = 11002\nseed = 4\n");
  CHECK(m[4].index == 4);
}

TEST_CASE("sweep sections: a run at a scale has the id of the same options in a flat file, in any order") {
  const SweepFile medium = parse(kTable, "medium");
  const SweepFile flat = parse("hidden-size = 256\ndata = bpe\ngrid.attn = marginal, soft\nepochs = 20\n");
  const std::vector<SweepRun> a = expand_sweep(medium), b = expand_sweep(flat);
  CHECK(a[0].id == b[1].id);  // soft seed 1
  CHECK(a[3].id == b[0].id);  // marginal seed 1
  CHECK(a[0].options != b[1].options);  // another order of the same options
  CHECK(run_config_identity(run_config_text(a[0])) == run_config_identity(run_config_text(b[1])));
}

TEST_CASE("sweep sections: grid.label names rows by their [label X] options; a label is in no option or id") {
  const std::string text =
      "warm-start = 0\n"                                       // 1
      "grid.label = marginal, var-enum+warm, var-enum\n"       // 2
      "grid.lr = 1e-3, 3e-3\n"                                 // 3
      "[label marginal]\n"                                     // 4
      "attn = marginal\n"                                      // 5
      "[label var-enum+warm]\n"                                // 6
      "attn = var-enum\n"                                      // 7
      "warm-start = 1500\n"                                    // 8
      "seeds = 1-2\n"                                          // 9
      "[label var-enum]\n"                                     // 10
      "attn = var-enum\n"                                      // 11
      "[eval test]\n"                                          // 12
      "split = test\n"                                         // 13
      "only.label = var-enum+warm\n";                          // 14
  const std::vector<SweepRun> runs = expand_sweep(parse(text));
  REQUIRE(runs.size() == 2 + 2 * 2 + 2);
  CHECK(runs[2].grid == std::vector<std::pair<std::string, std::string>>{{"label", "var-enum+warm"}, {"lr", "1e-3"}});
  CHECK(run_config_text(runs[2]) == "task = nmt\nwarm-start = 1500\nlr = 1e-3\nattn = var-enum\nseed = 1\n");
  CHECK(runs[2].evals == std::vector<std::string>{"test"});
  CHECK(runs[6].evals.empty());
  CHECK(run_info_json(parse(text), runs[2]).find(R"("grid":{"label":"var-enum+warm","lr":"1e-3"})") != std::string::npos);
  // The id is that of the same options in a file without labels.
  const std::vector<SweepRun> flat = expand_sweep(parse("attn = var-enum\nwarm-start = 1500\ngrid.lr = 1e-3, 3e-3\n"));
  CHECK(runs[2].id == flat[0].id);

  // Two labels that train the same options are one run twice: refused, naming both.
  check_input_error([&] { expand_sweep(parse("grid.label = a, b\n[label a]\nattn = soft\n[label b]\nattn = soft\n")); },
                    kPath, "label = a and label = b train with the same options");
  // A label is no option: --set refuses it, and a row cannot set it.
  SweepFile f = parse(text);
  CHECK_THROWS_AS(apply_sweep_settings(f, {"label=x"}, train_options), UsageError);
  check_input_error([&] { parse("grid.label = a\n[label a]\nlabel = b\n"); }, kPath + ":3:", "unknown option");
}

TEST_CASE("sweep sections: evaluations are listed per run, only.K limits them, and they change no id") {
  const std::vector<SweepRun> with = expand_sweep(parse(kTable));
  std::string without_evals = kTable.substr(0, kTable.find("[eval test]"));
  const std::vector<SweepRun> without = expand_sweep(parse(without_evals));
  REQUIRE(with.size() == without.size());
  for (size_t i = 0; i < with.size(); ++i) {
    CHECK(with[i].id == without[i].id);
    CHECK(with[i].options == without[i].options);
    CHECK(without[i].evals.empty());
  }
  CHECK(with[0].evals == std::vector<std::string>{"test"});
  CHECK(with[3].evals == std::vector<std::string>{"test", "kmax5"});  // marginal
  const SweepFile f = parse(kTable);
  REQUIRE(f.evals.size() == 2);
  CHECK(f.evals[0].options[1].key == "bleu");
  CHECK(f.evals[1].only[0].values == std::vector<std::string>{"marginal"});
}

TEST_CASE("sweep sections: [scale S, eval N] adds to [eval N] at scale S; an evaluation may exist at one scale") {
  const std::string text = kTable + "[scale medium, eval test]\nlimit = 100\nsplit = valid\n[scale medium, eval extra]\nkmax = 2\n";
  const SweepFile small = parse(text), medium = parse(text, "medium");
  REQUIRE(small.evals.size() == 2);
  CHECK(small.evals[0].options.size() == 2);
  REQUIRE(medium.evals.size() == 3);
  CHECK(medium.evals[0].options.size() == 3);
  CHECK(medium.evals[0].options[0].value == "valid");
  CHECK(medium.evals[2].name == "extra");
}

TEST_CASE("sweep sections: every bad section, key or scale is one InputError naming file and line") {
  auto bad = [&](const std::string& text, const std::string& needle, const std::string& scale = "") {
    check_input_error([&] { expand_sweep(parse(text, scale)); }, kPath, needle);
  };
  bad(kTable, "table.ini:4: --scale 'huge': unknown scale (the file has [scale small, medium])", "huge");
  bad("grid.attn = soft\n", "table.ini: --scale small: this file has no [scale NAME] sections", "small");
  bad("grid.attn = soft\n[scale a]\nlr = 1\n", "choose a scale with --scale NAME (a)");
  bad("scale = b\ngrid.attn = soft\n[scale a]\nlr = 1\n", "table.ini:1: scale: no [scale b] section (a)");
  bad("grid.attn = soft\n[model big]\nlr = 1\n", "table.ini:2: unknown section '[model big]': \"model\" is no grid key");
  bad("grid.attn = soft\n[attn soft extra]\n", "table.ini:2: unknown section '[attn soft extra]'");
  bad("grid.attn = soft\n[attn nope]\n", "table.ini:2: section '[attn nope]': no grid.attn lists \"nope\"");
  bad("grid.attn = soft\n[scale x, attn soft]\nlr = 1\n", "table.ini:2: section '[scale x, attn soft]': unknown scale 'x'");
  bad("grid.attn = soft\n[scale a]\nlr = 1\nepochs = 2\nlr = 3\n", "table.ini:5: duplicate key \"lr\" (first set at line 3)");
  bad("grid.attn = soft\n[attn soft]\nseeds = 1\nseeds = 2\n", "table.ini:4: duplicate key \"seeds\"");
  bad("grid.attn = soft\n[eval t]\nkmax = 1\nkmax = 2\n", "table.ini:4: duplicate key \"kmax\"");
  bad("grid.attn = soft\n[scale a]\nlr = 1\n[scale a]\n", "table.ini:4: section '[scale a]' repeated (first at line 2)");
  bad("grid.attn = soft\n[eval t]\nwarp = 1\n", "table.ini:3: unknown option \"warp\" for lava eval --task nmt");
  bad("grid.attn = soft\n[eval t]\nlr = 1\n", "table.ini:3: unknown option \"lr\" for lava eval --task nmt");  // train's, not eval's
  bad("grid.attn = soft\n[eval t]\nmodel = m\n", "table.ini:3: \"model\" is set by the sweep for each evaluation");
  bad("grid.attn = soft\n[eval t]\nseeds = 1\n", "table.ini:3: \"seeds\" cannot be set in [eval t]");
  bad("grid.attn = soft\n[eval t]\nonly.lr = 1\n", "table.ini:3: only.lr: \"lr\" is no grid key");
  bad("grid.attn = soft\n[eval t]\nonly.attn = marginal\n", "table.ini:3: only.attn: no grid.attn lists \"marginal\"");
  bad("grid.attn = soft\n[eval ../t]\n", "table.ini:2: section '[eval ../t]': '../t' is no eval name");
  bad("grid.attn = soft\n[eval t, attn soft]\n", "table.ini:2: section '[eval t, attn soft]': an evaluation takes only.attn");
  bad("grid.attn = soft\n[attn soft]\ngrid.lr = 1, 2\n", "table.ini:3: \"grid.lr\" cannot be set in [attn soft]");
  bad("grid.attn = soft\n[attn soft]\nwarp = 1\n", "table.ini:3: unknown option \"warp\" for lava train --task nmt");
  bad("grid.attn = soft\n[attn soft]\ntask = nmt\n", "table.ini:3: \"task\" cannot be set in [attn soft]");
  bad("grid.attn = soft\ngrid.lr = 1, 2\n[attn soft]\nlr = 3\n", "table.ini:4: \"lr\" is a grid key (line 2)");
  bad("grid.attn = soft\ngrid.lr = 1\n[attn soft]\nepochs = 3\n[lr 1]\nepochs = 4\n",
      "table.ini:5: [lr 1] and [attn soft] (line 3) both set epochs");
  bad("grid.attn = soft\n[attn soft\n", "table.ini:2: unknown section '[attn soft'");
  check_input_error([&] { parse_sweep_file(kPath, "grid.attn = soft\n[eval t]\n", train_options); }, kPath,
                    "table.ini:2: evaluations are not available here");
}

TEST_CASE("sweep sections: seeds per row count towards --max-runs") {
  const SweepFile f = parse("grid.attn = soft, marginal\n[attn soft]\nseeds = 1-20\n");
  CHECK(sweep_run_count(f, 21) == 21);
  check_input_error([&] { expand_sweep(f, 20); }, kPath, "2 rows and their seeds make more than 20 runs");
}

TEST_CASE("cli: lava sweep plan --scale: the scale's runs; a bad scale or an eval option lava eval refuses is one line") {
  TempDir d("sweep_sections_cli");
  write_text(d.file("t.ini"), "data = corpus\ngrid.attn = soft, marginal\n[scale a]\nemb-size = 8\n[scale b]\nemb-size = 16\n"
                              "[eval test]\nsplit = test\nbleu = true\nbeam = 10\nonly.attn = marginal\n");
  CliResult r = run_lava("sweep plan " + d.file("t.ini") + " --scale b --format csv");
  CHECK(r.code == 0);
  CHECK(r.out.find(",soft,test,") == std::string::npos);
  CHECK(r.out.find(",marginal,test,") != std::string::npos);
  CHECK(r.out.find(" --scale b") != std::string::npos);  // each exec command runs the same scale
  r = run_lava("sweep plan " + d.file("t.ini"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("choose a scale with --scale NAME (a, b)") != std::string::npos);
  r = run_lava("sweep plan " + d.file("t.ini") + " --scale c");
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(d.file("t.ini") + ":3: --scale 'c': unknown scale") != std::string::npos);
  // hidden-size is lava train's, not lava eval's (the real option lists).
  write_text(d.file("e.ini"), "data = corpus\ngrid.attn = soft\n[eval test]\nhidden-size = 8\n");
  r = run_lava("sweep plan " + d.file("e.ini"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(d.file("e.ini") + ":4: unknown option \"hidden-size\" for lava eval --task nmt") != std::string::npos);
  // Captioning sweeps like every task, with its own training and evaluation options (alpha-reg is captioning's only).
  write_text(d.file("c.ini"), "task = caption\ndata = scenes\ngrid.attn = soft, sat-hard\n[attn sat-hard]\nalpha-reg = 1\n"
                              "[eval test]\nsplit = test\nlimit = 20\n");
  r = run_lava("sweep plan " + d.file("c.ini") + " --format csv");
  CHECK(r.code == 0);
  CHECK(r.out.find(",sat-hard,test,") != std::string::npos);
  write_text(d.file("s.ini"), "data = corpus\ngrid.attn = soft\n[unknown thing]\n");
  r = run_lava("sweep slurm " + d.file("s.ini"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(d.file("s.ini") + ":3: unknown section") != std::string::npos);
}

TEST_CASE("sweep sections: the Slurm script's tasks run the scale it was written for") {
  const SweepFile medium = parse(kTable, "medium");
  SlurmOptions o;
  o.lava = "/opt/lava";
  const std::string s = slurm_array_script(medium, expand_sweep(medium), o);
  CHECK(s.find("exec /opt/lava sweep exec /srv/sw/table.ini --scale medium --run \"$run\"") != std::string::npos);
  const SweepFile flat = parse("grid.attn = soft\n");
  CHECK(slurm_array_script(flat, expand_sweep(flat), o).find("--scale") == std::string::npos);
}

TEST_CASE("sweep sections: --set KEY=VALUE wins over the file's lines at any scale and row, and out moves the runs") {
  SweepFile f = parse(kTable, "medium");
  apply_sweep_settings(f, {"warm-start=50", "data=/tmp/synth", "out=quick", "lr=1e-2"}, train_options);
  CHECK(f.out == "/srv/sw/quick");  // relative to the file's directory, as in the file
  REQUIRE(f.set.size() == 4);
  CHECK(f.set[3].key == "lr");
  const std::vector<SweepRun> runs = expand_sweep(f);
  REQUIRE(runs.size() == 5);
  CHECK(run_config_text(runs[4]) ==  // [scale medium, attn var-dirichlet]'s warm-start = 11002 gives way
        "task = nmt\nepochs = 20\ndata = /tmp/synth\nhidden-size = 256\nwarm-start = 50\nlr = 1e-2\nattn = var-dirichlet\nseed = 4\n");
  // The ids of a file with those lines.
  const SweepFile flat = parse("data = /tmp/synth\nhidden-size = 256\nepochs = 20\nlr = 1e-2\nwarm-start = 50\n"
                               "grid.attn = var-dirichlet\nseeds = 4\n");
  CHECK(runs[4].id == expand_sweep(flat)[0].id);

  auto bad = [&](const std::string& setting, const std::string& needle) {
    SweepFile g = parse(kTable);
    try {
      apply_sweep_settings(g, {setting}, train_options);
      FAIL("no UsageError for --set " << setting);
    } catch (const UsageError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  bad("data", "not KEY=VALUE");
  bad("=x", "not KEY=VALUE");
  bad("data=", "not KEY=VALUE");
  bad("hiden-size=8", "unknown option \"hiden-size\" for lava train --task nmt");
  bad("seed=3", "\"seed\" is set by the sweep for each run");
  bad("attn=soft", "\"attn\" is a grid key of /srv/sw/table.ini (line 1)");
}

TEST_CASE("cli: lava sweep --set: every command it writes repeats it; a bad one is one line, exit 2") {
  TempDir d("sweep_set_cli");
  write_text(d.file("t.ini"), "data = corpus\ngrid.attn = soft, marginal\n");
  CliResult r = run_lava("sweep plan " + d.file("t.ini") + " --set data=other --set 'out=my runs'");
  CHECK(r.code == 0);
  CHECK(r.out.find(" --set data=other --set 'out=my runs'") != std::string::npos);
  const CliResult plain = run_lava("sweep plan " + d.file("t.ini") + " --format csv");
  const CliResult other = run_lava("sweep plan " + d.file("t.ini") + " --set data=other --format csv");
  CHECK(plain.out.substr(plain.out.find('\n') + 1, 20) != other.out.substr(other.out.find('\n') + 1, 20));  // other ids
  r = run_lava("sweep slurm " + d.file("t.ini") + " --set data=other --set out=" + d.file("slurm-runs"));
  CHECK(r.code == 0);
  CHECK(slurp(d.file("slurm-runs/sweep.sbatch")).find(" --set data=other --set out=") != std::string::npos);
  r = run_lava("sweep plan " + d.file("t.ini") + " --set hidden");
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("--set 'hidden': not KEY=VALUE") != std::string::npos);
}
