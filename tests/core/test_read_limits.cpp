// Every reader of a user's file is bounded (core/read_file.hpp): a device is refused at once, an endless pipe or an
// oversized file stops at the format's limit, and JSON-lines logs are streamed. The CLI cases run the binary under a
// memory limit and a timeout, so that a reader that reads whole fails the test instead of hanging the suite.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/json_lines.hpp"
#include "core/read_file.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_nmt.hpp"

using namespace lava;

namespace {

// `lava ARGS` under 1 GB of address space and 10 s: a read of /dev/zero or an endless pipe ends in a few seconds.
CliResult run_lava_bounded(const std::string& args) {
  return run_bash(memory_limit(1000000) + "timeout 10 " + lava_bin() + " " + args);
}

void expect_one_line_naming(const CliResult& r, const std::string& path, const std::string& problem) {
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(path) != std::string::npos);
  CHECK(r.err.find(problem) != std::string::npos);
}

}  // namespace

TEST_CASE("read limits: a regular file over the limit is refused from its size, a device at once") {
  TempDir tmp("read_limits");
  const std::string big = tmp.file("big.ini");
  write_text(big, std::string(kSettingsLimit.bytes + 1, '#'));
  check_input_error([&] { (void)read_file(big, kSettingsLimit); }, big, "larger than 1 MiB, the limit for a settings file");
  const std::string fits = tmp.file("fits.ini");
  write_text(fits, std::string(kSettingsLimit.bytes, '#'));
  CHECK(read_file(fits, kSettingsLimit).size() == kSettingsLimit.bytes);
  check_input_error([&] { (void)read_file("/dev/zero", kSettingsLimit); }, "/dev/zero", "is a device, not a file");
  check_input_error([&] { (void)read_file("/dev/urandom", kModelLimit); }, "/dev/urandom", "is a device");
  CHECK(read_file("/dev/null", kSettingsLimit).empty());  // an empty input, as some scripts pass
  CHECK(size_text(kTextDataLimit.bytes) == "1 GiB");
  CHECK(size_text(300) == "300 bytes");
}

TEST_CASE("read limits: LineReader returns every line, the last without '\\n' too, and bounds one line") {
  TempDir tmp("line_reader");
  const std::string p = tmp.file("lines.txt");
  write_text(p, "a\n\nbc\r\nlast");
  LineReader r(p, 10);
  std::string line;
  std::vector<std::string> got;
  while (r.next(line)) got.push_back(line);
  CHECK(got == std::vector<std::string>{"a", "", "bc\r", "last"});
  CHECK(r.line_number() == 4);

  // A line of 200,000 bytes, past the 64 KiB read buffer, against a bound of 100,000: the error names its line.
  write_text(p, "short\n" + std::string(200000, 'x') + "\n");
  LineReader long_lines(p, 100000);
  CHECK(long_lines.next(line));
  check_input_error([&] { long_lines.next(line); }, p + ":2:", "line longer than 100000 bytes");
  LineReader zero("/dev/null", 10);
  CHECK(!zero.next(line));
  check_input_error([&] { LineReader dev("/dev/zero", 10); }, "/dev/zero", "is a device");
}

TEST_CASE("read limits: JSON lines are streamed; a bad line names the file's own line") {
  TempDir tmp("json_lines");
  const std::string p = tmp.file("m.jsonl");
  write_text(p, "{\"a\": 1}\n\n  \n{\"a\": 2}\n{\"a\": \n");
  std::vector<int64_t> seen;
  check_input_error(
      [&] {
        for (const JsonValue& j : read_json_lines(p)) seen.push_back(j.at("a").as_int());
      },
      p + ":5:");
  CHECK(seen == std::vector<int64_t>{1, 2});  // the good lines came before the error, one at a time
  write_text(p, "{\"a\": 1}\n[1]\n");
  check_input_error([&] { for (const JsonValue& j : read_json_lines(p)) (void)j; }, p + ":2:", "one JSON object");
}

TEST_CASE("read limits cli: every reader refuses /dev/zero with one line naming it") {
  TinyNmt f;
  TempDir tmp("dev_zero");
  namespace fs = std::filesystem;
  // Data folders whose files are /dev/zero: a corpus, a scenes folder, a run folder.
  const std::string corpus = tmp.file("corpus"), scenes = tmp.file("scenes"), run = tmp.file("runs/r1");
  fs::create_directories(corpus), fs::create_directories(scenes), fs::create_directories(run);
  for (const char* split : {"train", "valid", "test"})
    for (const char* lang : {"de", "en"}) fs::create_symlink("/dev/zero", corpus + "/" + split + "." + lang);
  fs::create_symlink("/dev/zero", scenes + "/meta.tsv");
  fs::create_symlink("/dev/zero", run + "/run.json");
  const std::string svg = tmp.file("p.svg");
  const std::pair<std::string, std::string> cases[] = {
      {"toy --config /dev/zero", "/dev/zero"},
      {"toy --params /dev/zero", "/dev/zero"},
      {"train --data " + corpus, corpus + "/train."},
      {"train --task seqvae --data " + corpus, corpus + "/train."},
      {"train --task vqa --data " + scenes, scenes + "/meta.tsv"},
      {"train --task caption --data " + scenes, scenes + "/meta.tsv"},
      {"eval --model /dev/zero --data " + f.corpus_dir, "/dev/zero"},
      {"translate --model " + f.model_path + " --input /dev/zero", "/dev/zero"},
      {"align --model " + f.model_path + " --data " + f.corpus_dir + " --gold /dev/zero", "/dev/zero"},
      {"sweep plan /dev/zero", "/dev/zero"},
      {"plot --y ppl --out " + svg + " /dev/zero", "/dev/zero"},
      {"report " + tmp.file("runs"), run + "/run.json"},
  };
  for (const auto& [args, path] : cases) {
    CAPTURE(args);
    const CliResult r = run_lava_bounded(args);
    INFO(r.err);
    expect_one_line_naming(r, path, "is a device, not a file");
  }
}

TEST_CASE("read limits cli: an endless pipe stops at the format's limit; metrics.jsonl is streamed") {
  // <(yes) never ends: the config reader stops one byte past 1 MiB.
  CliResult r = run_bash(memory_limit(1000000) + "timeout 10 " + lava_bin() + " toy --config <(yes)");
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("larger than 1 MiB, the limit for a settings file") != std::string::npos);

  // A run whose metrics.jsonl holds 23 MB of epoch lines: reading it whole and parsing every line at once took
  // about 8 times its size; streamed, report runs in 100 MB of address space.
  TempDir tmp("big_metrics");
  const std::string run = tmp.file("r1");
  std::filesystem::create_directories(run);
  write_text(run + "/run.json", R"({"id":"a","index":0,"sweep":"s.ini","task":"nmt","seed":1,"grid":{"attn":"soft"}})");
  write_text(run + "/status.json", R"({"state":"finished","exit":0,"sessions":1,"host":"h"})");
  std::string metrics;
  for (int e = 0; e < 80000; ++e)
    metrics += fmt::format(R"({{"event":"epoch","epoch":{},"valid_ppl":12.5,"best":true,"pad":"{}"}})", e,
                           std::string(220, 'x')) + "\n";
  metrics += R"({"event":"done","valid_ppl":7.25,"nan":false})" "\n";
  REQUIRE(metrics.size() > 23000000);
  write_text(run + "/metrics.jsonl", metrics);
  r = run_bash(memory_limit(100000) + "timeout 20 " + lava_bin() + " report --metrics ppl --format csv " + run);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("7.25") != std::string::npos);
}

TEST_CASE("read limits cli: a directory where a file is read is an error naming it") {
  TempDir dir("dir_as_file");
  const std::string d = dir.dir.string();
  for (const std::string& args : {"toy --config " + d, "toy --params " + d, "eval --model " + d + " --data " + d,
                                  "translate --model " + d + " --input " + d}) {
    CAPTURE(args);
    const CliResult r = run_lava(args);
    CHECK(r.code == 1);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(d) != std::string::npos);
    CHECK(r.out.empty());
  }
  check_input_error([&] { (void)read_file(d); }, d, "is a directory");
}
