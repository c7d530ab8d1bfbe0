// The test runner's --shard=I/N (tests/support/main.cpp), which make test and make sanitize use to run the cases on
// every core: the N parts are disjoint and together are every case that passes the filters; and
// tests/support/run-sharded.sh, which runs the parts and sums their closing lines.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace {

// The names `lava_tests --list-test-cases ARGS` prints (this binary, run again), and its exit status.
std::vector<std::string> listed_cases(const std::string& args, int* status = nullptr) {
  // The shell popen starts would read /proc/self/exe as itself: resolve it here.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = "'" + self + "' --list-test-cases -sf='*tests/gemm/*' " + args + " 2>/dev/null";
  std::vector<std::string> names;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  int rules = 0;  // the names are printed between two rules of '='
  while (std::fgets(buf, sizeof buf, pipe)) {
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (line.rfind("====", 0) == 0) ++rules;
    else if (rules == 1) names.push_back(line);
  }
  const int rc = pclose(pipe);
  if (status) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("test runner: --shard=I/N splits the cases passing the filters into N disjoint parts that cover them") {
  const std::vector<std::string> all = listed_cases("");
  REQUIRE(all.size() >= 3);
  std::vector<std::string> joined;
  for (int i = 1; i <= 3; ++i) {
    const std::vector<std::string> part = listed_cases("--shard=" + std::to_string(i) + "/3");
    CHECK(part.size() >= all.size() / 3);
    CHECK(part.size() <= all.size() / 3 + 1);
    joined.insert(joined.end(), part.begin(), part.end());
  }
  std::sort(joined.begin(), joined.end());
  CHECK(joined == all);  // each case once: a part that ignored --shard would repeat them
  int status = 0;
  CHECK(listed_cases("--shard=0/2", &status).empty());
  CHECK(status == 2);
  CHECK(listed_cases("--shard=3/2", &status).empty());
  CHECK(status == 2);
}

// tests/support/run-sharded.sh with a stand-in for the test binary: part I of 32 prints I passed (and part 1 the one
// skipped case), so the summed line says whether every part ran exactly once.
// Bash and a stand-in only, none of LAVA's code: make sanitize leaves it out (Makefile).
TEST_CASE("test runner: run-sharded.sh runs every part once, sums the closing lines, fails on a failed part" *
          doctest::test_suite("stand-ins")) {
  TempDir d("run_sharded");
  const auto run_with = [&](const std::string& failing_part) {
    write_text(d.file("fake"), "#!/bin/sh\n"
                               "part=${1#--shard=}; part=${part%/*}\n"
                               "if [ $part = 1 ]; then skipped=1; else skipped=0; fi\n" +
                                   failing_part + "\necho \"tests: $part passed, 0 failed, $skipped skipped\"\n");
    return run_captured("chmod +x " + d.file("fake") + " && tests/support/run-sharded.sh 2 " + d.file("fake"));
  };
  const auto closing_line = [](const CliResult& r) { return r.out.substr(r.out.rfind("tests: ")); };
  CliResult r = run_with("");
  CHECK(r.code == 0);
  CHECK(closing_line(r) == "tests: 528 passed, 0 failed, 1 skipped\n");  // 1 + 2 + ... + 32
  CHECK(r.out.find("== part 32/32\n") != std::string::npos);
  // A part that ends without its closing line (a crash) is one failed case; one that exits 1 fails the run.
  r = run_with("[ $part = 7 ] && exit 0");
  CHECK(r.code == 1);
  CHECK(closing_line(r) == "tests: 521 passed, 1 failed, 1 skipped\n");
  CHECK(r.out.find("part 7/32: ended without its closing line") != std::string::npos);
  r = run_with("[ $part = 9 ] && { echo 'tests: 9 passed, 0 failed, 0 skipped'; exit 1; }");
  CHECK(r.code == 1);
  CHECK(closing_line(r) == "tests: 528 passed, 0 failed, 1 skipped\n");
  CHECK(r.err.empty());
}
