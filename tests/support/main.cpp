// doctest runner. After doctest's own summary it prints the plain closing line CI reads:
//   tests: N passed, M failed, K skipped
// K counts the test cases marked skipped (doctest::skip(true)): those that need what this machine or this build
// lacks, e.g. GNU parallel, Fashion-MNIST, or the profiling build (tests/support/skip_unless.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

doctest::TestRunStats g_stats{};
bool g_have_stats = false;
unsigned g_skipped = 0;

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
  void test_run_end(const doctest::TestRunStats& s) override {
    g_stats = s;
    g_have_stats = true;
  }
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  // Called for test cases a filter leaves out too; only those marked skipped that the filters let through count.
  void test_case_skipped(const doctest::TestCaseData& tc) override {
    g_skipped += tc.m_skip && passes_filters(tc);
  }
};

}  // namespace

REGISTER_LISTENER("closing-line", 1, ClosingLine);

int main(int argc, char** argv) {
  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  int rc = ctx.run();
  if (g_have_stats && !ctx.shouldExit()) {
    unsigned ran = g_stats.numTestCasesPassingFilters, failed = g_stats.numTestCasesFailed;
    std::printf("tests: %u passed, %u failed, %u skipped\n", ran - failed, failed, g_skipped);
  }
  return rc;
}
