// doctest runner. After doctest's own summary it prints the plain closing line CI reads:
//   tests: N passed, M failed, K skipped
// K counts the test cases marked skipped (doctest::skip(true)): those that need what this machine or this build
// lacks, e.g. GNU parallel, Fashion-MNIST, or the profiling build (tests/skip_unless.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

doctest::TestRunStats g_stats{};
bool g_have_stats = false;
unsigned g_skipped = 0;

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
  // Called for test cases left out by a filter too; only those marked skipped count.
  void test_case_skipped(const doctest::TestCaseData& tc) override { g_skipped += tc.m_skip; }
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
