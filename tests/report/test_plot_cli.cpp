// lava plot: a series per JSON-lines file from the rows that meet --where, the names in the legend; bad input is one
// line naming the file (and line) with exit 1, a usage error exit 2.
#include <doctest/doctest.h>

#include <regex>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/xml_check.hpp"

TEST_CASE("lava plot: one series per file, only the rows that meet --where, a gap for a missing value") {
  TempDir tmp("plot");
  const std::string a = tmp.file("soft.train.jsonl"), b = tmp.file("b.jsonl"), svg = tmp.file("c.svg");
  write_text(a,
             "{\"event\":\"epoch\",\"epoch\":1,\"valid_ppl\":30}\n\n"
             "{\"event\":\"epoch\",\"epoch\":2,\"valid_ppl\":20}\n"
             "{\"event\":\"done\",\"epoch\":9,\"valid_ppl\":1}\n");
  write_text(b, "{\"event\":\"epoch\",\"epoch\":1,\"valid_ppl\":25}\n{\"event\":\"epoch\",\"epoch\":2}\n");
  const CliResult r = run_lava("plot --out " + svg + " --y valid_ppl --where event=epoch --title curves " + a +
                               " var-enum=" + b);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string text = slurp(svg);
  CHECK(xml_problem(text) == "");
  CHECK(text.find(">soft.train<") != std::string::npos);  // the file's name without .jsonl
  CHECK(text.find(">var-enum<") != std::string::npos);
  CHECK(text.find(">curves<") != std::string::npos);
  // The done line's point (epoch 9) is filtered out, so the x axis ends at 2: no tick labelled 9.
  CHECK(std::regex_search(text, std::regex(">2(\\.0)?<")));
  CHECK(!std::regex_search(text, std::regex(">9(\\.0)?<")));
}

TEST_CASE("lava plot: bad files and options") {
  TempDir tmp("plot_bad");
  const std::string good = tmp.file("g.jsonl"), bad = tmp.file("bad.jsonl"), svg = tmp.file("p.svg");
  write_text(good, "{\"epoch\":1,\"ppl\":3}\n");
  write_text(bad, "{\"epoch\":1,\"ppl\":3}\n[1, 2]\n");
  CliResult r = run_lava("plot --out " + svg + " --y ppl " + bad);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(bad + ":2: expected one JSON object per line") != std::string::npos);
  r = run_lava("plot --out " + svg + " --y ppl " + tmp.file("missing.jsonl"));
  CHECK(r.code == 1);
  CHECK(r.err.find("missing.jsonl") != std::string::npos);
  r = run_lava("plot --out " + svg + " --y nll " + good);  // no point anywhere: an error, not an empty picture
  CHECK(r.code == 1);
  CHECK(r.err.find("no row of any file has numbers under --x epoch and --y nll") != std::string::npos);
  CHECK(run_lava("plot --y ppl " + good).code == 2);
  CHECK(run_lava("plot --out " + svg + " " + good).code == 2);
  CHECK(run_lava("plot --out " + svg + " --y ppl").code == 2);
  CHECK(run_lava("plot --out " + svg + " --y ppl --where epoch " + good).code == 2);
}

TEST_CASE("lava plot: --y-max leaves out the points above it and says how many") {
  TempDir tmp("plot_ymax");
  const std::string a = tmp.file("a.jsonl"), svg = tmp.file("p.svg");
  write_text(a, "{\"epoch\":1,\"ppl\":3.5e224}\n{\"epoch\":2,\"ppl\":40}\n{\"epoch\":3,\"ppl\":30}\n");
  CliResult r = run_lava("plot --out " + svg + " --y ppl --y-max 100 " + a);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string text = slurp(svg);
  CHECK(text.find("ppl (1 point above 100 not shown)") != std::string::npos);
  CHECK(text.find("e+2") == std::string::npos);  // no tick reaches the diverged value
  // Without --y-max the axis has to reach it.
  REQUIRE(run_lava("plot --out " + svg + " --y ppl " + a).code == 0);
  CHECK(slurp(svg).find("not shown") == std::string::npos);
  CHECK(slurp(svg).find("e+22") != std::string::npos);
  // Every point above: no picture, and the message names --y-max.
  r = run_lava("plot --out " + svg + " --y ppl --y-max 1 " + a);
  CHECK(r.code == 1);
  CHECK(r.err.find("--y-max") != std::string::npos);
  CHECK(run_lava("plot --out " + svg + " --y ppl --y-max lots " + a).code == 2);
}

TEST_CASE("lava plot: values one ULP apart and values near the largest double give a finite picture, and end") {
  TempDir tmp("plot_extreme");
  const std::string svg = tmp.file("p.svg");
  // 1 and the next double after it; then ±1e308, whose span is wider than the largest double.
  const std::pair<std::string, std::string> cases[] = {
      {"{\"x\":1,\"y\":1}\n{\"x\":2,\"y\":1.0000000000000002}\n", "ulp"},
      {"{\"x\":1,\"y\":-1e308}\n{\"x\":2,\"y\":1e308}\n", "huge"},
      {"{\"x\":1e308,\"y\":1.7976931348623157e308}\n{\"x\":-1e308,\"y\":1.7976931348623157e308}\n", "max"}};
  for (const auto& [rows, name] : cases) {
    CAPTURE(name);
    const std::string in = tmp.file(name + ".jsonl");
    write_text(in, rows);
    const CliResult r = run_captured("timeout 10 " + lava_bin() + " plot --out " + svg + " --x x --y y " + in);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string text = slurp(svg);
    CHECK(text.find("<polyline") != std::string::npos);
    CHECK(text.find("nan") == std::string::npos);
    CHECK(!std::regex_search(text, std::regex("=\"-?inf")));
  }
}
