// lava bench train: the GEMM work counter counts 2·M·N·K per call, and the benchmark runs a real training step
// (finite objective near log V for an untrained model) and reports every figure.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/json.hpp"
#include "gemm/gemm.hpp"
#include "support/cli_runner.hpp"
#include "support/skip_unless.hpp"
#include "tasks/nmt/train_bench.hpp"

using namespace lava;

TEST_CASE("bench train: the GEMM flop counter adds 2·M·N·K per call" * skip_unless_profiling_build()) {
#if LAVA_PROFILE
  std::vector<float> A(7 * 5, 1.f), B(5 * 3, 1.f), C(7 * 3);
  const unsigned long long before = gemm_flop_count();
  gemm<float>(false, false, 7, 3, 5, 1.f, A.data(), 5, B.data(), 3, 0.f, C.data(), 3);
  gemm<float>(true, false, 5, 3, 7, 1.f, A.data(), 5, C.data(), 3, 0.f, B.data(), 3);
  CHECK(gemm_flop_count() - before == 2ull * 7 * 3 * 5 + 2ull * 5 * 3 * 7);
#endif
}

TEST_CASE("bench train: a step of every benchmarked variant is finite and the JSON row is complete") {
  for (AttnVariant v : {parse_attn_variant("soft", "nmt"), parse_attn_variant("marginal", "nmt"),
                        parse_attn_variant("var-enum", "nmt")}) {
    TrainBenchOptions o;
    o.attn = v;
    o.emb = 8, o.hidden = 8, o.attn_size = 8, o.inf_hidden = 8, o.vocab = 50;
    o.batch = 3, o.src_len = 4, o.tgt_len = 5, o.steps = 2, o.warmup = 1;
    const TrainBenchResult r = run_train_bench(o);
    CAPTURE(variant_info(v).name);
    CHECK(r.step_seconds > 0);
    CHECK(r.tokens_per_s * r.step_seconds == doctest::Approx(3 * 5));  // B · tgt_len predicted tokens a step
    CHECK(r.gemm_work_counted == lava::op_profile::kBuilt);
    CHECK((r.gflop_per_step > 0) == lava::op_profile::kBuilt);
    // An untrained model (init ±0.1) is close to uniform over the 50 words: objective ≈ −log 50 per token.
    CHECK(std::abs(r.objective_per_token + std::log(50.0)) < 0.2);
  }
  const CliResult r = run_lava(
      "bench train --attn marginal --format json -q --emb-size 8 --hidden-size 8 --attn-size 8 --inf-hidden 8 "
      "--vocab 40 --batch-size 2 --src-len 3 --tgt-len 3 --steps 1 --warmup 0");
  REQUIRE(r.code == 0);
  CHECK(run_lava("bench train --attn nonsense").code == 2);
  const JsonValue row = parse_json(r.out, "stdout");
  for (const char* key : {"tokens_per_s", "kernel_loop_gflops", "peak_gflops", "peak_rss_mb", "threads"}) {
    CAPTURE(key);
    CHECK(row.at(key).number() > 0);
  }
  CHECK(row.at("tokens_per_s").number() * row.at("step_ms").number() * 1e-3 == doctest::Approx(2 * 3));
  // The GEMM work: counted by the profiling build, n/a in the product build (never a made-up 0).
  const char* const work_keys[] = {"gflop_per_step", "gflops",        "peak_ratio",        "of_kernel_loop",
                                   "output_gflop_per_step", "output_gflops", "output_peak_ratio", "output_step_share"};
  if (!lava::op_profile::kBuilt) {
    for (const char* key : work_keys) {
      CAPTURE(key);
      CHECK(row.at(key).str() == "n/a");
    }
    CHECK(run_lava("bench train --attn soft --profile --steps 1 --warmup 0 -q").code == 2);
    return;
  }
  for (const char* key : work_keys) {
    CAPTURE(key);
    CHECK(row.at(key).number() > 0);
  }
  // The enumerated output layer of this tiny model keeps its logits (far under the cache), so a step is three GEMMs
  // of R = B·T·S = 2·3·3 rows, V = 40 words and hidden size 8: forward logits, dx and dW.
  CHECK(row.at("output_gflop_per_step").number() == doctest::Approx(3 * 2.0 * (2 * 3 * 3) * 40 * 8 * 1e-9));
  CHECK(row.at("output_gflop_per_step").number() < row.at("gflop_per_step").number());
  CHECK(row.at("output_step_share").number() <= 1.0);
  CHECK(row.at("gemm_threaded_share").number() >= 0.0);  // this tiny model's GEMMs are too small to split: 0
  CHECK(row.at("gemm_threaded_share").number() <= 1.0);
}

TEST_CASE("bench train: --logits-cache-mb changes memory and time, never the numbers") {
  // Cache 0 recomputes every output-layer chunk in the backward pass; 64 MB keeps the exponentials. The objective
  // after three Adam steps depends on every gradient, and must agree to the last printed digit.
  const std::string args =
      "bench train --attn soft --format json -q --emb-size 8 --hidden-size 8 --attn-size 8 --inf-hidden 8 "
      "--vocab 300 --batch-size 4 --src-len 5 --tgt-len 70 --steps 3 --warmup 0 --logits-cache-mb ";
  const CliResult kept = run_lava(args + "64"), recomputed = run_lava(args + "0");
  REQUIRE(kept.code == 0);
  REQUIRE(recomputed.code == 0);
  CHECK(parse_json(kept.out, "stdout").at("objective_per_token").number() ==
        parse_json(recomputed.out, "stdout").at("objective_per_token").number());
  const CliResult bad = run_lava("bench train --logits-cache-mb -1");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--logits-cache-mb") != std::string::npos);
}
