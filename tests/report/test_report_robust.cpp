// lava report against what a careful user meets: seeds past 2^53 read back exactly, one unreadable file costs only
// its own run's row, and one run reached twice (same directory, overlapping arguments, a copy) is never counted twice.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/check.hpp"
#include "core/json.hpp"
#include "report/run_record.hpp"
#include "report/run_table.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

// A finished run of sweep /s.ini with its own id, seed and valid_ppl.
void write_run(const std::string& dir, const std::string& id, int64_t index, const std::string& seed, double ppl) {
  std::filesystem::create_directories(dir);
  write_text(dir + "/run.json", "{\"id\":\"" + id + "\",\"index\":" + std::to_string(index) +
                                    ",\"sweep\":\"/s.ini\",\"task\":\"nmt\",\"seed\":" + seed + ",\"grid\":{\"attn\":\"soft\"}}\n");
  RunStatus st;
  st.state = RunState::finished;
  st.sessions = 1;
  write_run_status(dir, st);
  write_text(dir + "/metrics.jsonl", fmt::format("{{\"event\":\"done\",\"valid_ppl\":{},\"nan\":false}}\n", ppl));
}

}  // namespace

TEST_CASE("report robust: integers in JSON read back exactly over all of int64") {
  CHECK(parse_json("9007199254740993", "x").as_int() == 9007199254740993);
  CHECK(parse_json("9223372036854775807", "x").as_int() == INT64_MAX);
  CHECK(parse_json("-9223372036854775808", "x").as_int() == INT64_MIN);
  CHECK(to_json(parse_json("[9007199254740993]", "x")) == "[9007199254740993]");
  CHECK(to_json(JsonValue(int64_t(9007199254740993))) == "9007199254740993");
  CHECK_THROWS_AS(parse_json("9223372036854775808", "x").as_int(), InputError);  // past int64: a double, too big
  CHECK_THROWS_AS(parse_json("1.5", "x").as_int(), InputError);
  CHECK(parse_json("3e2", "x").as_int() == 300);
}

TEST_CASE("report robust: seeds 2^53 + 1 and 2^53 are two seeds; seed 2^63 - 1 reports") {
  TempDir d("report_seeds");
  write_run(d.file("a"), "a", 0, "9007199254740993", 1.0);
  write_run(d.file("b"), "b", 1, "9007199254740992", 3.0);
  write_run(d.file("c"), "c", 2, "9223372036854775807", 5.0);
  const CliResult r = run_lava("report " + d.dir.string() + " --metrics ppl --format csv");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == "attn,seeds,n,ppl,ppl_sd,status,log\nsoft,\"9007199254740992-9007199254740993,9223372036854775807\",3,3,2,ok,\n");
  CHECK(seed_ranges({INT64_MAX, INT64_MAX - 1}) == "9223372036854775806-9223372036854775807");
}

TEST_CASE("report robust: an unreadable run.json, status.json or metrics.jsonl is its run's row; the rest report") {
  TempDir d("report_unreadable");
  write_run(d.file("r0"), "r0", 0, "1", 2.0);
  write_run(d.file("r1"), "r1", 1, "2", 4.0);
  write_run(d.file("r2"), "r2", 2, "3", 6.0);
  write_run(d.file("r3"), "r3", 3, "4", 8.0);
  write_run(d.file("r4"), "r4", 4, "5", 10.0);
  write_text(d.file("r2/metrics.jsonl"), "{\"event\":\"epoch\",\"epoch\":1}\n{\"event\":\"done\",\"valid_p");  // torn
  write_text(d.file("r3/status.json"), "");
  write_text(d.file("r4/run.json"), "");
  const CliResult r = run_lava("report " + d.dir.string() + " --metrics ppl --format csv");
  CHECK(r.code == 1);
  const std::vector<std::string> rows = lines_of(r.out);
  REQUIRE(rows.size() == 5);
  CHECK(rows[1] == "soft,1-2,2,3,1.4142135623730951,ok,");
  CHECK(rows[2].starts_with("soft,3,0,nan,nan,"));
  CHECK(rows[2].find("unreadable: " + d.file("r2/metrics.jsonl") + ":2: ") != std::string::npos);
  CHECK(rows[3].starts_with("soft,4,0,nan,nan,"));
  CHECK(rows[3].find("unreadable: " + d.file("r3/status.json") + ":") != std::string::npos);
  CHECK(rows[4].starts_with("-,-,0,nan,nan,"));
  CHECK(rows[4].find("unreadable: " + d.file("r4/run.json") + ":") != std::string::npos);
  // stderr: one line per unreadable file, naming it.
  const std::vector<std::string> err = lines_of(r.err);
  REQUIRE(err.size() == 3);
  CHECK(err[0].find("lava report: " + d.file("r2/metrics.jsonl") + ":2:") == 0);
  CHECK(err[1].find("lava report: " + d.file("r3/status.json")) == 0);
  CHECK(err[2].find("lava report: " + d.file("r4/run.json")) == 0);
  // The markdown table too.
  const CliResult md = run_lava("report " + d.dir.string() + " --metrics ppl");
  CHECK(md.code == 1);
  CHECK(md.out.find("| soft | 1-2 | 3 ± 1.414 | ok |") != std::string::npos);
}

TEST_CASE("report robust: a run reached twice counts once; a copied run directory is refused") {
  TempDir d("report_twice");
  write_run(d.file("R/a"), "a", 0, "1", 2.0);
  write_run(d.file("R/b"), "b", 1, "2", 4.0);
  const std::string R = d.file("R");
  const CliResult once = run_lava("report " + R + " --metrics ppl --format csv");
  REQUIRE(once.code == 0);
  CHECK(once.out.find("soft,1-2,2,3,") != std::string::npos);
  std::filesystem::create_directory_symlink(R, d.file("link"));
  for (const std::string& args : {R + " " + R, R + " " + R + "/a", R + "/b " + R, R + " " + d.file("link")}) {
    const CliResult twice = run_lava("report " + args + " --metrics ppl --format csv");
    INFO(args);
    CHECK(twice.code == 0);
    CHECK(twice.out == once.out);
  }
  std::filesystem::create_directories(d.file("copy/a"));
  std::filesystem::copy(d.file("R/a"), d.file("copy/a"), std::filesystem::copy_options::recursive);
  const CliResult copy = run_lava("report " + R + " " + d.file("copy") + " --metrics ppl --format csv");
  CHECK(copy.code == 1);
  CHECK(copy.out.empty());
  CHECK(copy.err_lines() == 1);
  CHECK(copy.err.find("'" + d.file("R/a") + "' and '" + d.file("copy/a") + "' hold the same run (a of '/s.ini')") !=
        std::string::npos);
}
