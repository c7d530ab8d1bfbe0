// libFuzzer harness: one run's directory as `lava report` reads it (report/run_record.hpp) and the table made of it.
// The input is split at its first two NUL bytes into run.json, status.json and metrics.jsonl (a missing part is no
// file). read_run_record never throws for a bad file (it marks the run unreadable); the table may refuse a figure
// no run reports (UsageError).
#include <filesystem>

#include "fuzz_input.hpp"
#include "report/run_record.hpp"
#include "report/run_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = lava_fuzz::bytes(data, size);
  const std::string dir = lava_fuzz::scratch_dir() + "/run";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  size_t start = 0;
  for (const char* name : {lava::kRunInfoFile, lava::kRunStatusFile, lava::kRunMetricsFile}) {
    if (start > in.size()) break;
    const size_t end = std::min(in.find('\0', start), in.size());
    lava_fuzz::scratch_file(std::string("run/") + name, in.substr(start, end - start));
    start = end + 1;
  }
  const lava::RunRecord r = lava::read_run_record(dir);
  lava_fuzz::expect_clean([&] {
    lava::RunTableOptions o;
    o.metrics = {"ppl", "kl"};
    for (bool human : {true, false}) (void)lava::run_table({r, r}, o, human).render(lava::OutputFormat::csv);
  });
  return 0;
}
