// libFuzzer harness: one run folder as `lava report --tables paper` reads it (report/paper_runs.hpp) and the tables
// made of it. The input is split at its first three NUL bytes into config.ini, metrics.jsonl, eval/a.jsonl and
// eval/b.jsonl (a missing part is no file); run.json and status.json are fixed. A bad file is an InputError. The
// paper's rows are two of the kind the variants declare, one with a Table 3 note that reads an option.
#include <filesystem>

#include "fuzz_input.hpp"
#include "report/paper_tables.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = lava_fuzz::bytes(data, size);
  const std::string dir = lava_fuzz::scratch_dir() + "/paper_run";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/eval");
  lava_fuzz::scratch_file("paper_run/run.json",
                          R"({"id":"x","index":0,"sweep":"/none/s.ini","task":"nmt","seed":1,"grid":{"attn":"soft"}})");
  lava_fuzz::scratch_file("paper_run/status.json", R"({"state":"finished","exit":0,"sessions":1})");
  size_t start = 0;
  for (const char* name : {"config.ini", "metrics.jsonl", "eval/a.jsonl", "eval/b.jsonl"}) {
    if (start > in.size()) break;
    const size_t end = std::min(in.find('\0', start), in.size());
    lava_fuzz::scratch_file(std::string("paper_run/") + name, in.substr(start, end - start));
    start = end + 1;
  }
  lava_fuzz::expect_clean([&] {
    const std::vector<lava::PaperRun> runs = lava::read_paper_runs({dir});
    const lava::PaperRows paper({{"soft", {.rank = 1, .model = "Soft", .nmt_ppl = 7, .nmt_entropy = 1, .inference_rank = 1}},
                                 {"x", {.rank = 2, .inference_rank = 2, .inference_note = "at {temperature} {"}}});
    const lava::ReportDocument doc = lava::paper_tables(runs, paper);
    (void)doc.markdown();
    (void)doc.json_lines();
  });
  return 0;
}
