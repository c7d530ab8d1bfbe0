// The translation model end to end on a tiny synthetic corpus: every variant trains without NaN, enumeration in the
// training objective agrees with the exact evaluation, the KL-gap identity holds per token, checkpoints round-trip,
// and a step gives the same bits with 1 and 2 threads.
#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "data/synth_task.hpp"
#include "nn/optim.hpp"
#include "tasks/nmt/trainer.hpp"

using namespace lava;

namespace {

const std::string& tiny_corpus() {
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() / ("lava_test_synth_" + std::to_string(getpid()))).string();
    SynthOptions o;
    o.out_dir = d;
    o.train = 64, o.valid = 16, o.test = 16, o.min_len = 3, o.max_len = 7, o.vocab = 30, o.quiet = true;
    build_synth_task(o);
    return d;
  }();
  return dir;
}

ParallelCorpus load_tiny() {
  CorpusOptions co;
  co.dir = tiny_corpus();
  return load_parallel_corpus(co, VocabOptions{}, VocabOptions{});
}

Seq2SeqConfig tiny_config(const ParallelCorpus& c, AttnVariant v) {
  Seq2SeqConfig cfg;
  cfg.attn = v;
  cfg.src_vocab = c.src_vocab.size(), cfg.tgt_vocab = c.tgt_vocab.size();
  cfg.emb = 8, cfg.hidden = 12, cfg.attn_size = 6, cfg.inf_hidden = 6;
  cfg.dropout = 0.f;
  return cfg;
}

}  // namespace

TEST_CASE("seq2seq: the enumerated training objective equals the exact evaluation (no dropout)") {
  ParallelCorpus corpus = load_tiny();
  for (AttnVariant v : {parse_attn_variant("marginal", "nmt"), parse_attn_variant("hard-enum", "nmt"),
                        parse_attn_variant("var-enum", "nmt"), parse_attn_variant("soft", "nmt")}) {
    Seq2Seq model(tiny_config(corpus, v));
    model.ps.init_uniform(0.3f, 5);
    const std::vector<int> idx = {0, 1, 2, 3, 4};
    const Batch batch = make_batch(corpus.train.pairs, idx);
    Tape<float> tape;
    Ctx c{tape, model.ps, false, CounterRng(1, 2), 0.f};
    const ObjectiveTerms terms = model.objective(c, batch, ObjectiveOptions{});
    tape.reset();
    const AttentionEvalSums sums = model.evaluate(c, batch, 0);
    CAPTURE(variant_info(v).name);
    CHECK(sums.tokens == double(batch.target_tokens()));
    const double expected =
        v == parse_attn_variant("marginal", "nmt") || v == parse_attn_variant("soft", "nmt") ? sums.log_lik : sums.elbo;
    CHECK(terms.value_sum == doctest::Approx(expected).epsilon(1e-5));
    CHECK(sums.elbo <= sums.log_lik + 1e-4);                      // a bound, never above the exact likelihood
    CHECK(sums.max_identity_error < 1e-4);                          // log p − ELBO = KL(q ‖ posterior) per token
    CHECK(std::abs((sums.log_lik - sums.elbo) - sums.kl_posterior) < 1e-4 * sums.tokens);
  }
}

TEST_CASE("seq2seq: every variant trains a few steps without NaN and improves the training objective") {
  ParallelCorpus corpus = load_tiny();
  for (AttnVariant v :
       {parse_attn_variant("none", "nmt"), parse_attn_variant("soft", "nmt"), parse_attn_variant("marginal", "nmt"),
        parse_attn_variant("hard-enum", "nmt"), parse_attn_variant("hard-sample", "nmt"),
        parse_attn_variant("var-enum", "nmt"), parse_attn_variant("var-sample", "nmt"),
        parse_attn_variant("var-gumbel", "nmt"), parse_attn_variant("var-rws", "nmt")}) {
    Seq2Seq model(tiny_config(corpus, v));
    model.ps.init_uniform(0.1f, 5);
    Adam<float> adam;
    adam.lr = 0.01f;
    Tape<float> tape;
    const std::vector<int> idx = {0, 1, 2, 3, 4, 5, 6, 7};
    const Batch batch = make_batch(corpus.train.pairs, idx);
    double first = 0, last = 0;
    bool finite = true;
    for (int step = 0; step < 25; ++step) {
      tape.reset();
      Ctx c{tape, model.ps, true, CounterRng(3, uint64_t(step)), 0.f};
      ObjectiveTerms t = model.objective(c, batch, ObjectiveOptions{});
      Var<float> loss = affine(t.objective, -1.f / float(batch.B), 0.f);
      finite = finite && std::isfinite(loss.item());
      tape.backward(loss);
      adam.step(model.ps, clip_factor(grad_norm(model.ps), 5.f));
      if (step == 0) first = t.value_sum;
      last = t.value_sum;
    }
    CAPTURE(variant_info(v).name);
    CHECK(finite);
    CHECK(last > first);
  }
}

TEST_CASE("seq2seq: checkpoints round-trip and a step is bit-identical with 1 and 2 threads") {
  ParallelCorpus corpus = load_tiny();
  auto train_two_steps = [&](int threads) {
    omp_set_num_threads(threads);
    Seq2Seq model(tiny_config(corpus, parse_attn_variant("var-enum", "nmt")));
    model.ps.init_uniform(0.1f, 5);
    Adam<float> adam;
    Tape<float> tape;
    const std::vector<int> idx = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (int step = 0; step < 2; ++step) {
      tape.reset();
      Ctx c{tape, model.ps, true, CounterRng(3, uint64_t(step)), 0.3f};
      Var<float> loss = affine(model.objective(c, make_batch(corpus.train.pairs, idx), {}).objective, -0.1f, 0.f);
      tape.backward(loss);
      adam.step(model.ps);
    }
    return std::vector<float>(model.ps.values(), model.ps.values() + model.ps.size());
  };
  const int saved = omp_get_max_threads();
  const std::vector<float> one = train_two_steps(1), two = train_two_steps(2);
  omp_set_num_threads(saved);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);

  Seq2Seq model(tiny_config(corpus, parse_attn_variant("var-enum", "nmt")));
  model.ps.init_uniform(0.2f, 8);
  const std::string path = tiny_corpus() + "/model.safetensors";
  save_nmt(path, model, corpus.src_vocab, corpus.tgt_vocab, {{"epoch", "1"}});
  LoadedNmt loaded = load_nmt(path);
  CHECK(loaded.model->config().attn == parse_attn_variant("var-enum", "nmt"));
  CHECK(loaded.tgt_vocab.size() == corpus.tgt_vocab.size());
  const NmtEvalFigures a = evaluate_nmt(model, corpus.valid, 8, 0, 1);
  const NmtEvalFigures b = evaluate_nmt(*loaded.model, corpus.valid, 8, 0, 1);
  CHECK(a.nll == b.nll);
  CHECK(a.kl_gap == b.kl_gap);
  CHECK(std::abs(a.kl_gap - a.kl_posterior) < 1e-4);
  CHECK(a.identity_error < 1e-4);
  const NmtEvalFigures k1 = evaluate_nmt(model, corpus.valid, 8, 1, 1);
  CHECK(k1.entropy == doctest::Approx(0.0).epsilon(1e-12));  // K-max with K = 1: a one-hot prior
}
