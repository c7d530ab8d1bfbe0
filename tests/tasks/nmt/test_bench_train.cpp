// lava bench train: the GEMM work counter counts 2·M·N·K per call, and the benchmark runs a real training step
// (finite objective near log V for an untrained model) and reports every figure; --init-model starts from a model
// file's network and parameters, and --data times real pairs.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "gemm/gemm.hpp"
#include "support/cli_runner.hpp"
#include "support/skip_unless.hpp"
#include "support/temp_dir.hpp"
#include "tasks/nmt/model_file.hpp"
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

namespace {

// A vocabulary of the control symbols and the words w0 .. w{n−1}.
Vocab word_vocab(int n) {
  TokenCounter counts;
  for (int i = 0; i < n; ++i) counts.add("w" + std::to_string(i));
  return Vocab::build(counts, VocabOptions{});
}

// The network lava bench train builds from its size options, parameters uniform in ±0.1 from `init_seed` (the bench's
// own init with --seed init_seed), saved at `path` with vocabularies of `words` words a side.
void save_bench_network(const std::string& path, const TrainBenchOptions& o, const char* attn, float alpha,
                        uint64_t init_seed) {
  Seq2SeqConfig cfg;
  cfg.attn = parse_attn_variant(attn, "nmt");
  cfg.variant.sparse_alpha = alpha;
  cfg.src_vocab = cfg.tgt_vocab = o.vocab;
  cfg.emb = o.emb, cfg.hidden = o.hidden, cfg.attn_size = o.attn_size, cfg.inf_hidden = o.inf_hidden;
  cfg.dropout = 0.3f;  // the bench switches dropout off: a file's dropout must not change the steps
  Seq2Seq model(cfg);
  model.ps.init_uniform(0.1f, init_seed);
  const Vocab vocab = word_vocab(o.vocab - Vocab::kNumSpecial);
  save_nmt(path, model, vocab, vocab, {});
}

TrainBenchOptions tiny_bench(const char* attn) {
  TrainBenchOptions o;
  o.attn = parse_attn_variant(attn, "nmt");
  o.emb = 8, o.hidden = 8, o.attn_size = 8, o.inf_hidden = 8, o.vocab = 50;
  o.batch = 3, o.src_len = 6, o.tgt_len = 5, o.steps = 2, o.warmup = 1;
  return o;
}

}  // namespace

TEST_CASE("bench train --init-model: the file's network and parameters, bit for bit, and its variant's alpha") {
  TempDir dir("bench_init");
  for (const char* attn : {"marginal", "var-sparse"}) {
    CAPTURE(attn);
    const TrainBenchOptions own = tiny_bench(attn);
    // The same parameters as the bench's own init, from a file: the same steps, to the last bit of the objective.
    TrainBenchOptions from_file = tiny_bench("soft");  // the file's variant wins over o.attn
    from_file.init_model = dir.file(std::string(attn) + ".st");
    save_bench_network(from_file.init_model, own, attn, 2.f, own.seed);
    const TrainBenchResult a = run_train_bench(own), b = run_train_bench(from_file);
    CHECK(b.attn_name == std::string(attn));
    CHECK(b.objective_per_token == a.objective_per_token);
    CHECK(b.support_per_token == a.support_per_token);
    // Other parameters: another objective.
    save_bench_network(from_file.init_model, own, attn, 2.f, own.seed + 1);
    CHECK(run_train_bench(from_file).objective_per_token != a.objective_per_token);
  }
  // A sparse variant reports its support (at most the 6 source words), and the file's alpha is the one used.
  TrainBenchOptions o = tiny_bench("soft");
  o.init_model = dir.file("sparse.st");
  save_bench_network(o.init_model, o, "sparse-marginal", 2.f, 5);
  const TrainBenchResult sparsemax = run_train_bench(o);
  save_bench_network(o.init_model, o, "sparse-marginal", 1.5f, 5);
  const TrainBenchResult entmax = run_train_bench(o);
  CHECK(sparsemax.sparse);
  CHECK(sparsemax.support_per_token >= 1.0);
  CHECK(sparsemax.support_per_token <= 6.0);
  CHECK(entmax.objective_per_token != sparsemax.objective_per_token);
  CHECK_FALSE(run_train_bench(tiny_bench("marginal")).sparse);
}

TEST_CASE("bench train --init-model --data: the batches of a training epoch over the valid split, and the errors") {
  TempDir dir("bench_data");
  const TrainBenchOptions o = tiny_bench("marginal");
  const std::string model = dir.file("m.st"), corpus = dir.file("corpus");
  save_bench_network(model, o, "sparse-marginal", 2.f, 1);
  std::filesystem::create_directories(corpus);
  // Six pairs of 4 source words whose targets have 1 .. 6 words: --batch-size 3 cuts them into the batches of pairs
  // 0-2 and 3-5 (lengths sorted), 2 + 3 + 4 and 5 + 6 + 7 predicted tokens (words and </s>); two steps visit both,
  // 27 tokens. With --max-len 4, pairs 0-3: batches of 9 and 5 tokens, 14.
  {
    std::ofstream de(corpus + "/valid.de"), en(corpus + "/valid.en");
    for (int k = 0; k < 6; ++k) {
      de << "w1 w2 w3 w" << k << "\n";
      for (int j = 0; j <= k; ++j) en << (j ? " " : "") << "w" << (j + 7);
      en << "\n";
    }
  }
  const std::string bench = "bench train -q --format json --steps 2 --warmup 0 --batch-size 3 --init-model " + model;
  for (const auto& [extra, tokens] : {std::pair<std::string, double>{"", 27}, {" --max-len 4", 14}}) {
    CAPTURE(extra);
    const CliResult r = run_lava(bench + " --data " + corpus + extra);
    REQUIRE(r.code == 0);
    const JsonValue row = parse_json(r.out, "stdout");
    CHECK(row.at("attn").str() == "sparse-marginal");
    CHECK(row.at("tokens_per_s").number() * 2 * row.at("step_ms").number() * 1e-3 == doctest::Approx(tokens));
    CHECK(row.at("support").number() >= 1.0);
    CHECK(row.at("support").number() <= 4.0);  // 4 source words
  }
  CHECK(run_lava(bench).code == 0);  // random words of the file's vocabularies
  // Usage errors (exit 2) name the option; input errors (exit 1) the file.
  for (const char* args : {" --attn soft", " --emb-size 8", " --vocab 50", " --data x --src-len 4", " --max-len 4"}) {
    CAPTURE(args);
    const CliResult bad = run_lava(bench + args);
    CHECK(bad.code == 2);
    CHECK(bad.err.find(std::string(args).substr(1, std::string(args).find(' ', 1) - 1)) != std::string::npos);
  }
  CHECK(run_lava("bench train --data " + corpus).code == 2);
  const CliResult none = run_lava(bench + " --max-len 3 --data " + corpus);  // every source has 4 words
  CHECK(none.code == 1);
  CHECK(none.err.find("valid.de") != std::string::npos);
  CHECK(run_lava(bench + " --data " + dir.file("nothing")).code == 1);
  CHECK(run_lava("bench train --init-model " + dir.file("nothing.st")).code == 1);
}
