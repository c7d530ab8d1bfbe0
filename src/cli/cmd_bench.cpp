// lava bench gemm: GEMM throughput against the FMA peak and OpenBLAS measured in the same run.
#include <cstdio>
#include <cstring>
#include <sstream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "core/check.hpp"
#include "gemm/gemm_bench.hpp"

namespace lava {

namespace {

// "256,512" -> {256, 512}
std::vector<int> parse_int_list(const CommandLine& cl, const std::string& name) {
  std::vector<int> out;
  std::stringstream ss(cl.get_string(name));
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size() || v < 1) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::logic_error&) {
      cl.fail(fmt::format("--{}: '{}' is not a list of positive whole numbers", name, cl.get_string(name)));
    }
  }
  if (out.empty()) cl.fail("--" + name + " is empty");
  return out;
}

int bench_gemm(int argc, char** argv) {
  CommandLine cl("bench gemm", "lava bench gemm [options]",
                 "Times lava's float GEMM (median of --repeats samples after a warm-up) on square sizes, the LSTM-step\n"
                 "shapes 64x2048x1024 and the output-layer shapes 1920x20000x512 (NN, NT, TN), with each thread count;\n"
                 "reports GFLOP/s, the ratio to the FMA peak measured in the same run, and the ratio to OpenBLAS when\n"
                 "libopenblas.so.0 can be loaded (OPENBLAS_CORETYPE is unset inside this process so OpenBLAS uses its\n"
                 "best kernels). LAVA itself never needs OpenBLAS.");
  cl.options().add_options()                                                                           //
      ("sizes", po::value<std::string>()->default_value("256,512,1024,2048"), "square sizes, comma-separated")  //
      ("thread-counts", po::value<std::string>()->default_value("1,2"), "thread counts, comma-separated")        //
      ("repeats", po::value<std::string>()->default_value("5"), "timing samples per case (median)")             //
      ("quick", po::bool_switch(), "square sizes only, no LSTM or output-layer shapes");
  if (!cl.parse(argc, argv)) return 0;
  const std::vector<int> sizes = parse_int_list(cl, "sizes"), threads = parse_int_list(cl, "thread-counts");
  const int repeats = int(cl.get_int("repeats", 1, 1000));
  std::vector<GemmBenchRow> rows;
  std::vector<std::array<int, 3>> squares;
  for (int s : sizes) squares.push_back({s, s, s});
  rows = run_gemm_bench(squares, threads, {"NN"}, repeats);
  if (!cl.vm()["quick"].as<bool>()) {
    for (auto shape : {std::array<int, 3>{64, 2048, 1024}, std::array<int, 3>{1920, 20000, 512}}) {
      auto more = run_gemm_bench({shape}, threads, {"NN", "NT", "TN"}, repeats);
      rows.insert(rows.end(), more.begin(), more.end());
    }
  }
  Table t;
  t.add_column("m").add_column("n").add_column("k").add_column("trans").add_column("threads");
  t.add_column("gflops", ".1f").add_column("peak_ratio", ".3f").add_column("openblas_gflops", ".1f");
  t.add_column("openblas_ratio", ".3f");
  for (const GemmBenchRow& r : rows) {
    const bool ob = r.openblas_gflops > 0;
    t.add_row({double(r.m), double(r.n), double(r.k), r.trans, double(r.threads), r.gflops, r.peak_ratio,
               ob ? Cell(r.openblas_gflops) : Cell("n/a"), ob ? Cell(r.gflops / r.openblas_gflops) : Cell("n/a")});
  }
  if (cl.common().format == OutputFormat::table) std::printf("kernel: %s\n", gemm_kernel_name().c_str());
  t.print(stdout, cl.common().format);
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::printf("usage: lava bench gemm [options]\n\n  gemm  GEMM GFLOP/s vs the FMA peak and OpenBLAS, same run\n");
    return argc < 2 ? 2 : 0;
  }
  const std::string what = argv[1];
  if (what == "gemm") return bench_gemm(argc - 1, argv + 1);
  throw UsageError("lava bench: unknown benchmark '" + what + "' (gemm)");
}

}  // namespace lava
