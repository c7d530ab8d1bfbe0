// Report output: --format parsing, the three table renderings, and the progress line formatter.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/check.hpp"
#include "core/json.hpp"
#include "report/progress.hpp"
#include "report/table.hpp"
#include "support/cli_runner.hpp"

using lava::OutputFormat;

namespace {

lava::Table sample_table() {
  lava::Table t;
  t.add_column("model").add_column("ppl", ".2f").add_column("kl", "%.1e").add_column("n");
  t.add_row({"soft", 7.1234, 0.5, 3});
  t.add_row({"var, enum", 0.1 + 0.2, NAN, 12});
  return t;
}

// Everything a FILE* received, read back from a tmpfile.
std::string contents(std::FILE* f) {
  std::string s;
  std::rewind(f);
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  return s;
}

}  // namespace

TEST_CASE("table: --format parses table, json, csv and rejects the rest naming --format") {
  CHECK(lava::parse_output_format("table") == OutputFormat::table);
  CHECK(lava::parse_output_format("json") == OutputFormat::json);
  CHECK(lava::parse_output_format("csv") == OutputFormat::csv);
  CHECK(lava::to_string(OutputFormat::csv) == "csv");
  try {
    lava::parse_output_format("JSON");
    FAIL("no UsageError");
  } catch (const lava::UsageError& e) {
    CHECK(std::string(e.what()).find("--format") != std::string::npos);
  }
}

TEST_CASE("table: human rendering aligns columns at display precision") {
  const std::string expected =
      "model       ppl       kl   n\n"
      "----------------------------\n"
      "soft       7.12  5.0e-01   3\n"
      "var, enum  0.30      nan  12\n";
  CHECK(sample_table().render(OutputFormat::table) == expected);
  lava::Table u;  // widths count UTF-8 code points, not bytes
  u.add_column("name").add_column("x", ".1f");
  u.add_row({"\xC3\xA9t\xC3\xA9", 1.0});
  CHECK(u.render(OutputFormat::table) == "name    x\n---------\n\xC3\xA9t\xC3\xA9   1.0\n");
}

TEST_CASE("table: json and csv renderings keep full precision") {
  const lava::Table t = sample_table();
  CHECK(t.render(OutputFormat::json) ==
        "{\"model\":\"soft\",\"ppl\":7.1234,\"kl\":0.5,\"n\":3}\n"
        "{\"model\":\"var, enum\",\"ppl\":0.30000000000000004,\"kl\":null,\"n\":12}\n");
  CHECK(t.render(OutputFormat::csv) ==
        "model,ppl,kl,n\n"
        "soft,7.1234,0.5,3\n"
        "\"var, enum\",0.30000000000000004,nan,12\n");
  lava::Table q;  // RFC 4180: quotes doubled, line breaks inside quotes
  q.add_column("say \"hi\"");
  q.add_row({"a\"b"});
  q.add_row({"two\nlines"});
  q.add_row({"plain"});
  CHECK(q.render(OutputFormat::csv) == "\"say \"\"hi\"\"\"\n\"a\"\"b\"\n\"two\nlines\"\nplain\n");
  CHECK(lava::parse_json(t.render(OutputFormat::json).substr(0, t.render(OutputFormat::json).find('\n')), "row")
            .at("ppl")
            .number() == 7.1234);
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  t.print(f, OutputFormat::csv);
  CHECK(contents(f) == t.render(OutputFormat::csv));
  std::fclose(f);
}

TEST_CASE("table: misuse is an internal error, not silent garbage") {
  lava::Table t;
  CHECK_THROWS_AS(t.add_column("x", ".2q"), std::logic_error);
  t.add_column("a").add_column("b");
  CHECK_THROWS_AS(t.add_row({1.0}), std::logic_error);
  t.add_row({1.0, "x"});
  CHECK_THROWS_AS(t.add_column("c"), std::logic_error);
}

TEST_CASE("progress: duration, ETA and the line formatter") {
  CHECK(lava::format_duration(0) == "00:00");
  CHECK(lava::format_duration(59.99) == "00:59");
  CHECK(lava::format_duration(754) == "12:34");
  CHECK(lava::format_duration(3600) == "1:00:00");
  CHECK(lava::format_duration(100000) == "27:46:40");
  CHECK(lava::format_duration(-1) == "--:--");
  CHECK(lava::format_duration(NAN) == "--:--");
  CHECK(lava::format_duration(INFINITY) == "--:--");

  CHECK(lava::eta_seconds(250, 1000, 10.0) == doctest::Approx(30.0));
  CHECK(lava::eta_seconds(1000, 1000, 10.0) == 0.0);
  CHECK(lava::eta_seconds(1200, 1000, 10.0) == 0.0);
  CHECK(std::isnan(lava::eta_seconds(0, 1000, 10.0)));
  CHECK(std::isnan(lava::eta_seconds(5, 0, 10.0)));

  CHECK(lava::format_progress_line("train", 420, 1000, 12.5, "loss 3.21 | 1234 tok/s", 20) ==
        "train  42% [########............] 420/1000 00:12<00:17 | loss 3.21 | 1234 tok/s");
  CHECK(lava::format_progress_line("train", 420, 1000, 12.5, "", 0) == "train  42% 420/1000 00:12<00:17");
  CHECK(lava::format_progress_line("eval", 0, 10, 0.0, "", 4) == "eval   0% [....] 0/10 00:00<--:--");
  CHECK(lava::format_progress_line("eval", 10, 10, 61.0, "", 4) == "eval 100% [####] 10/10 01:01<00:00");
  CHECK(lava::format_progress_line("read", 77, 0, 3.0, "x", 10) == "read 77 00:03 | x");
}

TEST_CASE("progress: a log gets plain lines only; a terminal gets redraws; quiet gets nothing") {
  lava::Progress::set_quiet(false);  // process-wide: a command run in-process by an earlier test may have set it
  {  // not a TTY: fast updates print nothing (< 10 s), finish prints one plain line
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    {
      lava::Progress p(100, "work", f, /*tty=*/false);
      for (int i = 1; i <= 100; ++i) p.update(i, "step");
      p.finish();
    }
    const std::string s = contents(f);
    CHECK(s.find('\r') == std::string::npos);
    CHECK(s.starts_with("work 100% 100/100 00:00<00:00 | step\n"));
    CHECK(s.find('\n') == s.size() - 1);
    std::fclose(f);
  }
  {  // TTY: first update draws at once with '\r', finish ends the line
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    {
      lava::Progress p(10, "work", f, /*tty=*/true);
      p.update(1, "a");
      p.finish();
    }
    const std::string s = contents(f);
    CHECK(s.starts_with("\rwork  10% ["));
    CHECK(s.ends_with(" 1/10 00:00<00:00 | a\n"));
    std::fclose(f);
  }
  {  // TTY interrupted (e.g. by an exception): the destructor still ends the line
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    { lava::Progress(10, "work", f, true).update(3); }
    CHECK(contents(f).ends_with("\n"));
    std::fclose(f);
  }
  {
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    lava::Progress::set_quiet(true);
    {
      lava::Progress p(10, "work", f, true);
      p.update(5);
      p.finish();
    }
    lava::Progress::set_quiet(false);
    CHECK(contents(f).empty());
    std::fclose(f);
  }
}

TEST_CASE("table: a diverged figure in a fixed-point column is printed in scientific notation") {
  lava::Table t;
  t.add_column("name").add_column("ppl", ".3f");
  t.add_row({std::string("diverged"), std::exp(207.0)});
  t.add_row({std::string("fine"), 152.25});
  const std::string out = t.render(OutputFormat::table);
  CHECK(out.find("e+89") != std::string::npos);
  CHECK(out.find("152.250") != std::string::npos);
  CHECK(longest_line(out) < 40);
}
