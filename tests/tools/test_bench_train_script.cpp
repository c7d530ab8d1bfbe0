// tools/bench-train.sh's arithmetic (`make bench`), with stand-ins for `lava bench train` and the PyTorch peer that
// print fixed JSON lines: the speed ratio, the target ratio, the fraction of the FMA peak and of the kernel loop
// that target needs, what it asks of the GEMMs with the other work as profiled, the scaling table (the median of the
// rounds' own ratios), the order of the rounds, and the refusal of a reference-BLAS peer and of a peer whose BLAS ran
// on another thread count than the row's.
#include <doctest/doctest.h>

#include <string>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace {

// lava bench train's JSON line on one thread, as the stand-ins print it.
const std::string kLavaOneThread = R"({"tokens_per_s":1000,"gflops":50,"peak_gflops":160,"peak_ratio":0.3125,)"
                                   R"("kernel_loop_gflops":125,"peak_rss_mb":300,"output_gflops":80,)"
                                   R"("output_peak_ratio":0.5})";

// The step and GEMM totals of lava bench train --profile (its other totals are ignored): a profiled step of step_ms,
// gemm_ms of it (share s) in GEMMs.
std::string gemm_total(const std::string& share, const std::string& step_ms = "100",
                       const std::string& gemm_ms = "80") {
  return "\n" R"j({"event":"profile_total","what":"step (sum of the rows)","ms":)j" + step_ms + R"j(,"share":1})j"
         "\n" R"j({"event":"profile_total","what":"GEMM (all ops)","ms":)j" + gemm_ms + R"j(,"share":)j" + share +
         "}";
}

// The first lines of every stand-in: bash, and t = the --threads it was given (1 if none).
const std::string kStandInHead =
    "#!/usr/bin/env bash\nt=1; while [ $# -gt 0 ]; do [ \"$1\" = --threads ] && t=$2; shift; done\n";

// A stand-in that prints one JSON line whose figures depend on the --threads it was given: `one` or `two`.
std::string stand_in(const std::string& one, const std::string& two) {
  return kStandInHead +
         "if [ $t = 1 ]; then echo '" + one + "'; else echo '" + two + "'; fi\n";
}

// Runs the script on soft attention, 1 and 2 threads, one round, with the two stand-ins (or `peer` for the
// PyTorch one); LAVA prints `lava_one` on one thread (with its GEMM share of the profiled step), and the peer
// says its BLAS ran on `peer_blas_threads_one` threads when asked for one (on two when asked for two).
CliResult run_script(const TempDir& dir, const std::string& peer_blas, std::string peer = "",
                     const std::string& lava_one = kLavaOneThread + gemm_total("0.8"),
                     const std::string& peer_blas_threads_one = "1") {
  write_text(dir.file("lava"),
             stand_in(lava_one,
                      R"({"tokens_per_s":1800,"gflops":90,"peak_gflops":304,"peak_ratio":0.296,)"
                      R"("kernel_loop_gflops":200,"peak_rss_mb":300,"output_gflops":150,"output_peak_ratio":0.49})" +
                          gemm_total("0.5", "60", "30")));
  const std::string torch_one = R"({"tokens_per_s":500,"peak_rss_mb":600,"blas":")" + peer_blas +
                                R"(","blas_threads":)" + peer_blas_threads_one + R"(,"blas_gflops":100})";
  const std::string torch_two = R"({"tokens_per_s":600,"peak_rss_mb":600,"blas":")" + peer_blas +
                                R"(","blas_threads":2,"blas_gflops":100})";
  write_text(dir.file("torch"), stand_in(torch_one, torch_two));
  if (peer.empty()) peer = dir.file("torch");
  return run_bash("chmod +x " + dir.file("lava") + " " + dir.file("torch") + "\nBENCH_TORCH=" + peer +
                  " tools/bench-train.sh --variants soft --threads '1 2' --steps 1 --rounds 1 --lava " +
                  dir.file("lava") + "\n");
}

}  // namespace

// Bash and stand-ins only, none of LAVA's code: make sanitize leaves the suite out (Makefile).
TEST_SUITE_BEGIN("stand-ins");

TEST_CASE("bench-train.sh: ratios, the target's share of the FMA peak and of the kernel loop, and the scaling table") {
  TempDir dir("bench_script");
  const CliResult r = run_script(dir, "OpenBLAS 0.3.21");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  // One thread: 1000 / 500 = 2.00×; the 1.5× target needs 1.5 · 500 tok/s · (50 GFLOP/s / 1000 tok/s) = 37.5
  // GFLOP/s: 37.5 / 160 = 0.23 of the FMA peak and 37.5 / 125 = 0.30 of the kernel loop. With the other 20 % of
  // the step kept, the GEMMs get 1/750 − 0.2/1000 s a token for 0.05 GFLOP: 44.1 GFLOP/s, 0.35 of the kernel loop;
  // they run at 50 / 0.8 = 62.5, 0.50 of it.
  CHECK(r.out.find("| soft | 1 | 1000 | 500 | 2.00 | 2.00 | 1.5 | 0.23 | 0.30 | 0.35 | 0.50 | "
                   "OpenBLAS 0.3.21, 1 thread (100.0) |") != std::string::npos);
  // Two threads: 1800 / 600 = 3.00×; the 2× target needs 2 · 600 · (90 / 1800) = 60 GFLOP/s: 60 / 304 = 0.20,
  // 60 / 200 = 0.30; with half the step kept, 1800 / 1200 − 0.5 = 1 and 90 / 200 = 0.45; they run at
  // 90 / 0.5 / 200 = 0.90.
  CHECK(r.out.find("| soft | 2 | 1800 | 600 | 3.00 | 3.00 | 2 | 0.20 | 0.30 | 0.45 | 0.90 | "
                   "OpenBLAS 0.3.21, 2 threads (100.0) |") != std::string::npos);
  // Scaling: LAVA 1800 / 1000, PyTorch 600 / 500, FMA peak 304 / 160, kernel loop 200 / 125; then the profile's
  // split of the step (100 ms, 80 in GEMMs, on one thread; 60 ms, 30 in GEMMs, on two): the profiled step
  // 100 / 60, the GEMM share 80 / 100, GEMMs 80 / 30, the rest 20 / 30, the step with GEMMs at 2×
  // 100 / (40 + 30) and with the rest at 2× 100 / (30 + 10).
  CHECK(r.out.find("| soft | 1.80 | 1.20 | 1.90 | 1.60 | 1.67 | 0.80 | 2.67 | 0.67 | 1.43 | 2.50 |") !=
        std::string::npos);
}

TEST_CASE("bench-train.sh: rounds alternate their order, and scaling is the median of the rounds' own ratios") {
  // Each stand-in logs its name and thread count, and LAVA's tokens/s depend on the round: one thread 1000, 1000,
  // 2000; two threads 1800, 2000, 3000. The rounds' own scaling is 1.8, 2.0 and 1.5, median 1.80 (the ratio of
  // the medians, 2000 / 1000, would say 2.00).
  TempDir dir("bench_script");
  const std::string log = dir.file("order");
  write_text(dir.file("lava"),
             kStandInHead + "echo \"lava $t\" >> " + log + "\n" +
                 "n=$(grep -c \"^lava $t$\" " + log + ")\n" +
                 "case $t/$n in 1/3) tok=2000 ;; 1/*) tok=1000 ;; 2/1) tok=1800 ;; 2/2) tok=2000 ;; *) tok=3000 ;;\n"
                 "esac\n" +
                 "if [ $t = 1 ]; then p=160 k=125; else p=304 k=200; fi\n" +
                 "echo \"{\\\"tokens_per_s\\\":$tok,\\\"gflops\\\":50,\\\"peak_gflops\\\":$p,\\\"peak_ratio\\\":0.3,"
                 "\\\"kernel_loop_gflops\\\":$k,\\\"peak_rss_mb\\\":300,\\\"output_gflops\\\":80,"
                 "\\\"output_peak_ratio\\\":0.5}\"\n");
  const std::string torch_line = R"({\"tokens_per_s\":500,\"peak_rss_mb\":600,\"blas\":\"OpenBLAS 0.3.21\",)"
                                 R"(\"blas_threads\":$t,\"blas_gflops\":100})";
  write_text(dir.file("torch"), kStandInHead + "echo \"torch $t\" >> " + log +
                                    "\necho \"" + torch_line + "\"\n");
  const CliResult r = run_bash("chmod +x " + dir.file("lava") + " " + dir.file("torch") + "\nBENCH_TORCH=" +
                               dir.file("torch") + " tools/bench-train.sh --variants soft --threads '1 2' " +
                               "--steps 1 --rounds 3 --lava " + dir.file("lava") + "\n");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  // Even rounds: thread counts in order, LAVA first; odd rounds: both reversed.
  CHECK(slurp(log) ==
        "lava 1\ntorch 1\nlava 2\ntorch 2\n"
        "torch 2\nlava 2\ntorch 1\nlava 1\n"
        "lava 1\ntorch 1\nlava 2\ntorch 2\n");
  // The rows still pair each round's two sides: one thread 1000 / 500 in rounds 0 and 1, 2000 / 500 in round 2.
  CHECK(r.out.find("| soft | 1 | 1000 | 500 | 2.00 | 2.00–4.00 |") != std::string::npos);
  // Scaling: LAVA 1.80 (above), PyTorch 500 → 500, FMA peak 304 / 160, kernel loop 200 / 125; no profile totals,
  // so no split of the step.
  CHECK(r.out.find("| soft | 1.80 | 1.00 | 1.90 | 1.60 | n/a | n/a | n/a | n/a | n/a | n/a |") != std::string::npos);
}

TEST_CASE("bench-train.sh: where the other work alone overruns the target's time, the GEMMs would need ∞") {
  // One thread, 400 tok/s against 500 with a 1.5× target: 1/750 s a token, of which the 60 % of the step outside
  // GEMMs already takes 0.6/400 = 1/667. The GEMMs run at 50 / 0.4 = 125 GFLOP/s, 1.00 of the kernel loop.
  TempDir dir("bench_script");
  const CliResult r = run_script(dir, "OpenBLAS 0.3.21", "",
                                 R"({"tokens_per_s":400,"gflops":50,"peak_gflops":160,"peak_ratio":0.3125,)"
                                 R"("kernel_loop_gflops":125,"peak_rss_mb":300,"output_gflops":80,)"
                                 R"("output_peak_ratio":0.5})" + gemm_total("0.4", "100", "40"));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("| soft | 1 | 400 | 500 | 0.80 | 0.80 | 1.5 | 0.59 | 0.75 | ∞ | 1.00 |") != std::string::npos);
}

TEST_CASE("bench-train.sh: a peer on the reference BLAS is refused, and the script fails") {
  TempDir dir("bench_script");
  const CliResult r = run_script(dir, "reference BLAS");
  CHECK(r.code == 1);
  CHECK(r.out.find("| soft | 1 | 1000 | 500 | refused | refused | 1.5 | n/a | n/a | n/a |") != std::string::npos);
  CHECK(r.err.find("ratios refused") != std::string::npos);
}

TEST_CASE("bench-train.sh: a peer whose BLAS ran on more threads than the row's is refused, and the script fails") {
  // What Debian's torch does by default: torch.set_num_threads(1) leaves OpenBLAS's thread per core running.
  TempDir dir("bench_script");
  const CliResult r = run_script(dir, "OpenBLAS 0.3.21", "", kLavaOneThread + gemm_total("0.8"), "2");
  CHECK(r.code == 1);
  CHECK(r.out.find("| soft | 1 | 1000 | 500 | refused | refused | 1.5 | n/a | n/a | n/a | 0.50 | "
                   "OpenBLAS 0.3.21, 2 threads (100.0) |") != std::string::npos);
  // The two-thread row, whose peer ran on two, keeps its ratio.
  CHECK(r.out.find("| soft | 2 | 1800 | 600 | 3.00 |") != std::string::npos);
  CHECK(r.err.find("another thread count than the row's") != std::string::npos);
}

TEST_CASE("bench-train.sh: a peer that does not say its BLAS threads is refused") {
  TempDir dir("bench_script");
  const CliResult r = run_script(dir, "OpenBLAS 0.3.21", "", kLavaOneThread + gemm_total("0.8"), "null");
  CHECK(r.code == 1);
  CHECK(r.out.find("| soft | 1 | 1000 | 500 | refused |") != std::string::npos);
  CHECK(r.out.find("OpenBLAS 0.3.21, ? threads (100.0) |") != std::string::npos);
}

TEST_CASE("bench-train.sh: a peer that fails is named in one line, and the script fails") {
  TempDir dir("bench_script");
  const CliResult r = run_script(dir, "OpenBLAS 0.3.21", "false");
  CHECK(r.code == 1);
  CHECK(r.err == "bench-train.sh: the peer failed: false --attn soft --threads 1 --steps 1\n");
}

TEST_CASE("bench-train.sh --help prints the whole header, usage line included") {
  const CliResult r = run_bash("tools/bench-train.sh --help\n");
  CHECK(r.code == 0);
  CHECK(r.out.rfind("`make bench`: LAVA against PyTorch", 0) == 0);
  CHECK(r.out.find("tools/bench-train.sh [--variants") != std::string::npos);
  CHECK(r.out.find("BENCH_TORCH=CMD") != std::string::npos);
  CHECK(r.out.find("set -euo") == std::string::npos);
}

TEST_SUITE_END();
