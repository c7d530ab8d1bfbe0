// The test runner's --shard=I/N (tests/support/main.cpp), which make test and make sanitize use to run the cases as
// one process a core: the N parts are disjoint and together are every case that passes the filters.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

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
