// doctest runner. After doctest's own summary it prints the plain closing line CI reads:
//   tests: N passed, M failed, K skipped
// K counts the test cases marked skipped (doctest::skip(true)): those that need what this machine or this build
// lacks, e.g. GNU parallel, Fashion-MNIST, or the profiling build (tests/support/skip_unless.hpp).
// --shard=I/N runs the I-th of N parts of the test cases that pass the filters: all N processes order the cases at
// random with the same seed and each takes one contiguous range, so that N processes at once run every case exactly
// once with their work mixed across files (tests/support/run-sharded.sh runs them and sums their closing lines).
// Skipped cases are counted by shard 1 only.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool g_have_stats = false;
unsigned g_ran = 0, g_failed = 0, g_skipped = 0;
bool g_count_skipped = true;
unsigned g_query_count = 0;  // the cases a --count query found

// Whether a test case passes the command line's filters (-tc, -sf, -ts and their exclusions), as doctest decides
// it: its own matchesAny, which is in this file since DOCTEST_CONFIG_IMPLEMENT brings in the implementation.
bool passes_filters(const doctest::TestCaseData& tc) {
  const auto& f = doctest::detail::g_cs->filters;
  const bool cs = doctest::detail::g_cs->case_sensitive;
  using doctest::matchesAny;
  return matchesAny(tc.m_file.c_str(), f[0], true, cs) && !matchesAny(tc.m_file.c_str(), f[1], false, cs) &&
         matchesAny(tc.m_test_suite, f[2], true, cs) && !matchesAny(tc.m_test_suite, f[3], false, cs) &&
         matchesAny(tc.m_name, f[4], true, cs) && !matchesAny(tc.m_name, f[5], false, cs);
}

struct ClosingLine : doctest::IReporter {
  explicit ClosingLine(const doctest::ContextOptions&) {}
  void test_run_end(const doctest::TestRunStats&) override { g_have_stats = true; }
  void report_query(const doctest::QueryData& q) override {
    if (q.run_stats) g_query_count = q.run_stats->numTestCasesPassingFilters;
  }
  void test_run_start() override {}
  void test_case_start(const doctest::TestCaseData&) override { ++g_ran; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& st) override { g_failed += !st.testCaseSuccess; }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  // Called for test cases a filter leaves out too; only those marked skipped that the filters let through count.
  void test_case_skipped(const doctest::TestCaseData& tc) override {
    g_skipped += g_count_skipped && tc.m_skip && passes_filters(tc);
  }
};

}  // namespace

REGISTER_LISTENER("closing-line", 1, ClosingLine);

// Reads and removes --shard=I/N from argv; false with a message on a malformed one.
bool take_shard(int& argc, char** argv, unsigned& shard, unsigned& shards) {
  for (int a = 1; a < argc; ++a) {
    if (std::strncmp(argv[a], "--shard=", 8) != 0) continue;
    char tail = 0;
    if (std::sscanf(argv[a] + 8, "%u/%u%c", &shard, &shards, &tail) != 2 || shard < 1 || shard > shards) {
      std::fprintf(stderr, "lava_tests: --shard wants I/N with 1 <= I <= N, not '%s'\n", argv[a] + 8);
      return false;
    }
    for (int b = a; b + 1 < argc; ++b) argv[b] = argv[b + 1];
    --argc;
    return true;
  }
  return true;
}

int main(int argc, char** argv) {
  unsigned shard = 1, shards = 1;
  if (!take_shard(argc, argv, shard, shards)) return 2;
  std::vector<std::string> args(argv, argv + argc);
  // argv plus `extra`, as doctest parses them (its options are read from a command line).
  const auto run_with = [&args](doctest::Context& ctx, const std::vector<std::string>& extra) {
    std::vector<const char*> v;
    for (const auto& a : args) v.push_back(a.c_str());
    for (const auto& a : extra) v.push_back(a.c_str());
    ctx.applyCommandLine(int(v.size()), v.data());
  };
  doctest::Context ctx;
  if (shards > 1) {
    // doctest's --first/--last count the cases that pass the filters and are not marked skipped, which is what
    // its --count query reports (to the listener above; the console's copy goes to /dev/null).
    {
      doctest::Context counter;
      run_with(counter, {"--count", "--out=/dev/null"});
      counter.run();
    }
    const unsigned count = g_query_count;
    unsigned first = (shard - 1) * count / shards + 1, last = shard * count / shards;
    if (last < first) first = last = count + 1;  // an empty part: a range past every case
    run_with(ctx, {"--order-by=rand", "--rand-seed=1", "--first=" + std::to_string(first),
                   "--last=" + std::to_string(last)});
    g_count_skipped = shard == 1;
  } else {
    run_with(ctx, {});
  }
  int rc = ctx.run();
  if (g_have_stats && !ctx.shouldExit())
    std::printf("tests: %u passed, %u failed, %u skipped\n", g_ran - g_failed, g_failed, g_skipped);
  return rc;
}
