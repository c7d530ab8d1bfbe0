// Standalone driver for lava::run_gemm_bench (not built by the Makefile; the CLI's `lava bench gemm` is the
// supported entry point). Build from the repository's root after `make build/liblava.a`:
//   g++ -std=c++20 -O3 -march=native -fopenmp -Isrc -o build/bench_gemm tools/bench_gemm_openblas.cpp
//       build/liblava.a -lfmt
// Usage: bench_gemm [repeats] [threads,...] [trans,...] MxNxK ...
//   e.g. bench_gemm 5 1,2 NN,NT,TN 512x512x512 64x2048x1024
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gemm/gemm_bench.hpp"

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next - at));
    if (next == std::string::npos) return out;
    at = next + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s repeats threads,... trans,... MxNxK ...\n", argv[0]);
    return 2;
  }
  const int repeats = std::atoi(argv[1]);
  std::vector<int> threads;
  for (const auto& t : split(argv[2], ',')) threads.push_back(std::atoi(t.c_str()));
  const std::vector<std::string> trans = split(argv[3], ',');
  std::vector<std::array<int, 3>> shapes;
  for (int i = 4; i < argc; ++i) {
    const auto d = split(argv[i], 'x');
    if (d.size() != 3) return 2;
    shapes.push_back({std::atoi(d[0].c_str()), std::atoi(d[1].c_str()), std::atoi(d[2].c_str())});
  }
  fmt::print("kernel: {}\n", lava::gemm_kernel_name());
  for (int t : threads) fmt::print("fma peak, {} thread(s): {:.1f} GFLOP/s\n", t, lava::measure_fma_peak_gflops(t));
  fmt::print("{:>6} {:>6} {:>6} {:>3} {:>3} {:>9} {:>6} {:>9} {:>6}\n", "M", "N", "K", "tr", "th", "lava", "peak%",
             "openblas", "ratio");
  for (const auto& r : lava::run_gemm_bench(shapes, threads, trans, repeats)) {
    fmt::print("{:>6} {:>6} {:>6} {:>3} {:>3} {:>9.1f} {:>5.1f}% {:>9.1f} {:>6.2f}\n", r.m, r.n, r.k, r.trans,
               r.threads, r.gflops, 100 * r.peak_ratio, r.openblas_gflops,
               r.openblas_gflops > 0 ? r.gflops / r.openblas_gflops : 0.0);
    std::fflush(stdout);
  }
}
