#include "tasks/nmt/train_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/check.hpp"
#include "gemm/gemm.hpp"
#include "tasks/nmt/seq2seq.hpp"
#include "nn/optim.hpp"

namespace lava {

namespace {

// B pairs of random word ids (never the 4 control ids), drawn from the counter RNG so every run sees the same data.
std::vector<SentencePair> random_pairs(const TrainBenchOptions& o) {
  const CounterRng rng(o.seed, stream_id("bench-train-data"));
  const uint64_t words = uint64_t(o.vocab - Vocab::kNumSpecial);
  std::vector<SentencePair> pairs(static_cast<size_t>(o.batch));
  uint64_t counter = 0;
  for (size_t b = 0; b < pairs.size(); ++b) {
    pairs[b].line = int(b) + 1;
    for (int i = 0; i < o.src_len; ++i) pairs[b].src.push_back(int32_t(Vocab::kNumSpecial + rng.below(counter++, words)));
    for (int j = 0; j + 1 < o.tgt_len; ++j)
      pairs[b].tgt.push_back(int32_t(Vocab::kNumSpecial + rng.below(counter++, words)));
  }
  return pairs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

TrainBenchResult run_train_bench(const TrainBenchOptions& o) {
  LAVA_CHECK(o.vocab > Vocab::kNumSpecial && o.tgt_len >= 1 && o.src_len >= 1 && o.steps >= 1, "bad bench options");
  Seq2SeqConfig cfg;
  cfg.attn = o.attn;
  cfg.src_vocab = cfg.tgt_vocab = o.vocab;
  cfg.emb = o.emb, cfg.hidden = o.hidden, cfg.attn_size = o.attn_size, cfg.inf_hidden = o.inf_hidden;
  cfg.dropout = 0.f;  // the peer runs without dropout too
  Seq2Seq model(cfg);
  model.ps.init_uniform(0.1f, o.seed);
  const std::vector<SentencePair> pairs = random_pairs(o);
  std::vector<int> index(pairs.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = int(i);
  const Batch batch = make_batch(pairs, index);
  Adam<float> adam;
  adam.lr = 1e-3f;
  Tape<float> tape;
  std::vector<double> seconds;
  double flops = 0, threaded_flops = 0, objective = 0;
#if LAVA_PROFILE
  OpWork output_before;
#endif
  // One training step, as lava train runs it; returns its objective per target token.
  auto train_step = [&](int step) {
    tape.reset();
    Ctx c{tape, model.ps, true, CounterRng(o.seed, stream_id("train")).child(uint64_t(step)), 0.f};
    const ObjectiveTerms terms = model.objective(c, batch, ObjectiveOptions{});
    Var<float> loss = affine(terms.objective, -1.f / float(batch.B), 0.f);
    tape.backward(loss);  // accumulates into zeros: the last Adam step consumed the gradients
    static const int adam_kind = op_profile::kind_id("adam (clip + update)");
    const op_profile::Scope update(adam_kind, op_profile::Phase::update);
    adam.step(model.ps, clip_factor(grad_norm(model.ps), 5.f));
    return terms.value_sum / double(batch.target_tokens());
  };
  for (int step = 0; step < o.warmup + o.steps; ++step) {
#if LAVA_PROFILE
    const unsigned long long flops_before = gemm_flop_count(), threaded_before = gemm_threaded_flop_count();
    if (step == o.warmup) output_before = output_layer_work();
#endif
    const auto t0 = std::chrono::steady_clock::now();
    objective = train_step(step);
    const auto t1 = std::chrono::steady_clock::now();
    if (step >= o.warmup) {
      seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
#if LAVA_PROFILE
      flops = double(gemm_flop_count() - flops_before);
      threaded_flops = double(gemm_threaded_flop_count() - threaded_before);
#endif
    }
  }
  TrainBenchResult r;
  r.step_seconds = median(seconds);
  r.tokens_per_s = double(batch.target_tokens()) / r.step_seconds;
  r.gemm_work_counted = op_profile::kBuilt;
  r.gflop_per_step = flops * 1e-9;
  r.gflops = r.gflop_per_step / r.step_seconds;
  r.gemm_threaded_share = flops > 0 ? threaded_flops / flops : 0;
#if LAVA_PROFILE
  const OpWork output_after = output_layer_work();
  const double output_seconds = output_after.seconds - output_before.seconds;
  r.output_gflop_per_step = 1e-9 * (output_after.flops - output_before.flops) / double(o.steps);
  r.output_step_share = output_seconds / (double(o.steps) * r.step_seconds);
  r.output_gflops = output_seconds > 0 ? 1e-9 * (output_after.flops - output_before.flops) / output_seconds : 0;
#endif
  r.peak_rss_mb = peak_rss_mb();
  r.objective_per_token = objective;
#if LAVA_PROFILE
  if (o.profile) {  // after everything above, so that the profile's clock readings cannot touch those figures
    std::vector<double> profiled;
    op_profile::start();
    for (int step = o.warmup + o.steps; step < o.warmup + 2 * o.steps; ++step) {
      const auto t0 = std::chrono::steady_clock::now();
      train_step(step);
      profiled.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    op_profile::stop();
    r.profile = op_profile::totals();
    r.profile_steps = o.steps;
    r.profile_step_seconds = median(profiled);
  }
#else
  LAVA_CHECK(!o.profile, "the op profile needs a profiling build");
#endif
  return r;
}

}  // namespace lava
