#include "tasks/nmt/train_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "core/check.hpp"
#include "data/batcher.hpp"
#include "data/parallel_corpus.hpp"
#include "gemm/gemm.hpp"
#include "tasks/nmt/model_file.hpp"
#include "tasks/nmt/seq2seq.hpp"
#include "nn/optim.hpp"

namespace lava {

namespace {

// B pairs of random word ids (never the 4 control ids) of vocabularies of src_vocab and tgt_vocab ids, drawn from the
// counter RNG so every run sees the same data.
std::vector<SentencePair> random_pairs(const TrainBenchOptions& o, int src_vocab, int tgt_vocab) {
  const CounterRng rng(o.seed, stream_id("bench-train-data"));
  const uint64_t src_words = uint64_t(src_vocab - Vocab::kNumSpecial);
  const uint64_t tgt_words = uint64_t(tgt_vocab - Vocab::kNumSpecial);
  std::vector<SentencePair> pairs(static_cast<size_t>(o.batch));
  uint64_t counter = 0;
  for (size_t b = 0; b < pairs.size(); ++b) {
    pairs[b].line = int(b) + 1;
    for (int i = 0; i < o.src_len; ++i)
      pairs[b].src.push_back(int32_t(Vocab::kNumSpecial + rng.below(counter++, src_words)));
    for (int j = 0; j + 1 < o.tgt_len; ++j)
      pairs[b].tgt.push_back(int32_t(Vocab::kNumSpecial + rng.below(counter++, tgt_words)));
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

// The valid split of o.data, encoded with the model's vocabularies, without the pairs over o.max_len tokens a side
// (0: all), as lava train validates.
std::vector<SentencePair> corpus_pairs(const TrainBenchOptions& o, const Vocab& src_vocab, const Vocab& tgt_vocab) {
  CorpusOptions co;
  co.dir = o.data;
  co.max_len = o.max_len;
  ParallelSplit valid = read_parallel_split(co, CorpusSplit::valid, src_vocab, tgt_vocab);
  if (valid.pairs.empty())
    throw input_error(valid.src_path, 0, fmt::format("no sentence pair of at most {} tokens a side", o.max_len));
  return std::move(valid.pairs);
}

// The network the bench trains and its batches: o's sizes from a uniform init, or init_model's network from its
// parameters; one batch of random pairs, or o.data's pairs in the batches of one epoch of lava train (similar lengths
// together, src/data/batcher.hpp), which the steps visit in turn.
struct BenchSetup {
  std::unique_ptr<Seq2Seq> model;
  std::vector<SentencePair> pairs;
  std::vector<std::vector<int>> batches;  // indices into pairs
};
BenchSetup bench_setup(const TrainBenchOptions& o) {
  BenchSetup setup;
  Seq2SeqConfig cfg;
  std::optional<LoadedNmt> trained;
  if (o.init_model.empty()) {
    cfg.attn = o.attn;
    cfg.src_vocab = cfg.tgt_vocab = o.vocab;
    cfg.emb = o.emb, cfg.hidden = o.hidden, cfg.attn_size = o.attn_size, cfg.inf_hidden = o.inf_hidden;
  } else {
    trained = load_nmt(o.init_model);
    cfg = trained->model->config();
  }
  cfg.dropout = 0.f;  // the peer runs without dropout too; dropout declares no parameter, so the stores' layouts agree
  setup.model = std::make_unique<Seq2Seq>(cfg);
  if (!trained) {
    setup.model->ps.init_uniform(0.1f, o.seed);
  } else {
    LAVA_CHECK(setup.model->ps.size() == trained->model->ps.size(), "parameter store of {} rebuilt with another size",
               o.init_model);
    std::copy_n(trained->model->ps.values(), setup.model->ps.size(), setup.model->ps.values());
  }
  if (o.data.empty()) {
    setup.pairs = random_pairs(o, cfg.src_vocab, cfg.tgt_vocab);
    setup.batches.emplace_back(static_cast<size_t>(o.batch));
    for (size_t i = 0; i < setup.batches[0].size(); ++i) setup.batches[0][i] = int(i);
  } else {
    setup.pairs = corpus_pairs(o, trained->src_vocab, trained->tgt_vocab);
    setup.batches = train_batches(setup.pairs, BatchOptions{.batch_size = o.batch}, o.seed, 0);
  }
  return setup;
}

}  // namespace

TrainBenchResult run_train_bench(const TrainBenchOptions& o) {
  LAVA_CHECK(o.vocab > Vocab::kNumSpecial && o.tgt_len >= 1 && o.src_len >= 1 && o.steps >= 1, "bad bench options");
  LAVA_CHECK(o.data.empty() || !o.init_model.empty(), "bench data without a model file");
  const BenchSetup setup = bench_setup(o);
  Seq2Seq& model = *setup.model;
  const Seq2SeqConfig& cfg = model.config();
  std::vector<Batch> batches;
  for (const std::vector<int>& index : setup.batches) batches.push_back(make_batch(setup.pairs, index));
  Adam<float> adam;
  adam.lr = 1e-3f;
  Tape<float> tape;
  std::vector<double> seconds;
  double flops = 0, threaded_flops = 0, objective = 0, support_sum = 0, timed_tokens = 0;
#if LAVA_PROFILE
  OpWork output_before;
#endif
  // One training step, as lava train runs it; returns its objective per target token and adds its support sum.
  auto train_step = [&](int step) {
    const Batch& batch = batches[size_t(step) % batches.size()];
    tape.reset();
    Ctx c{tape, model.ps, true, CounterRng(o.seed, stream_id("train")).child(uint64_t(step)), 0.f};
    const ObjectiveTerms terms = model.objective(c, batch, ObjectiveOptions{});
    if (step >= o.warmup) support_sum += terms.support_sum, timed_tokens += double(batch.target_tokens());
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
  // One batch: the median step. Batches of several sizes: all the timed tokens over all the timed time.
  double total_seconds = 0;
  for (double s : seconds) total_seconds += s;
  r.step_seconds = batches.size() == 1 ? median(seconds) : total_seconds / double(o.steps);
  r.tokens_per_s = timed_tokens / double(o.steps) / r.step_seconds;
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
  r.attn_name = variant_info(cfg.attn).name;
  r.sparse = variant_info(cfg.attn).sparse;
  r.support_per_token = support_sum / timed_tokens;
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
