// The sequence VAE (tasks/seqvae/model.hpp): the ELBO's parts against a plain-loop recomputation in double
// (seqvae_reference.hpp) for a tiny model and fixed noise, free bits and KL annealing as specified, active units on a
// hand-made case, padding invariance of both encoders, bit-identical training with 1 and 2 threads, −ELBO going down
// on the synthetic task, bad input as one InputError line, and the CLI functions end to end.
#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "autodiff/ops_layernorm.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/json.hpp"
#include "data/synth_task.hpp"
#include "report/progress.hpp"
#include "seqvae_reference.hpp"
#include "support/capture_stdout.hpp"
#include "support/check_input_error.hpp"
#include "support/non_finite_model.hpp"
#include "support/temp_dir.hpp"
#include "tasks/seqvae/eval.hpp"
#include "tasks/seqvae/model_file.hpp"
#include "tasks/seqvae/trainer.hpp"

using namespace lava;

namespace {

using seqvae_test::Ref;

SeqVaeConfig tiny_config(const std::string& dec_attn, const std::string& score, const std::string& encoder = "lstm") {
  SeqVaeConfig c;
  c.encoder = *enum_from_name(kSeqVaeEncoderNames, encoder);
  c.dec_attn = *enum_from_name(kDecoderAttentionNames, dec_attn);
  c.score = *enum_from_name(kSeqVaeScoreNames, score);
  c.vocab = 9, c.emb = 3, c.hidden = 4, c.latent = 2, c.layers = 1, c.attn_size = 3, c.heads = 2, c.tf_layers = 1;
  c.dropout = 0.f;
  return c;
}

const std::vector<SentencePair> kTinyPairs = {
    {{4, 5, 6}, {4, 5, 6}, 1}, {{7, 8}, {7, 8}, 2}, {{5, 5, 8, 4, 6}, {5, 5, 8, 4, 6}, 3}};

// A small corpus from `lava data synth` (English side only is used): train/valid/test.en.
struct SynthCorpus {
  TempDir tmp{"seqvae"};
  std::string dir;
  explicit SynthCorpus(int train = 200, int valid = 30) {
    dir = tmp.file("synth");
    SynthOptions o;
    o.out_dir = dir, o.seed = 3, o.train = train, o.valid = valid, o.test = 20, o.vocab = 30, o.max_len = 8;
    o.quiet = true;
    build_synth_task(o);
  }
};

SeqVaeTrainOptions small_train_options(const std::string& dir) {
  Progress::set_quiet(true);  // train_seqvae's progress lines would only clutter the test output
  SeqVaeTrainOptions o;
  o.data.dir = dir;
  o.model.emb = 8, o.model.hidden = 16, o.model.latent = 4, o.model.attn_size = 8, o.model.heads = 2;
  o.model.tf_layers = 1, o.model.dropout = 0.1f;
  o.loop.batch_size = 16, o.eval.batch_size = 32, o.loop.lr = 3e-3;
  o.loop.format = OutputFormat::json;
  return o;
}

}  // namespace

TEST_CASE("seqvae: recon and KL match a plain-loop recomputation for a tiny model and fixed noise") {
  for (auto [attn, score] : {std::pair<const char*, const char*>{"soft", "additive"}, {"soft", "multiplicative"},
                             {"none", "additive"}}) {
    CAPTURE(attn);
    CAPTURE(score);
    SeqVae model(tiny_config(attn, score));
    model.init(0.6f, 5);
    const std::vector<int> idx = {0, 1, 2};
    const Batch batch = make_batch(kTinyPairs, idx);
    Tape<float> tape;
    Ctx c{tape, model.ps, true, CounterRng(1, 2), 0.f};
    const CounterRng noise(9, stream_id("test/noise"));
    KlOptions klo;  // weight 1, no free bits: the loss is −ELBO
    const SeqVaeTerms terms = model.terms(c, batch, noise, klo);
    const Ref ref{model};
    const int Z = model.config().latent;
    double recon = 0, kl = 0;
    for (int b = 0; b < batch.B; ++b) {
      std::vector<double> eps(static_cast<size_t>(Z));
      for (int d = 0; d < Z; ++d) eps[size_t(d)] = noise.normal(uint64_t(b * Z + d));
      const Ref::Sentence s = ref.run(kTinyPairs[size_t(b)].src, eps);
      for (int d = 0; d < Z; ++d) CHECK(terms.z.val()[b * Z + d] == doctest::Approx(s.z[size_t(d)]).epsilon(1e-5));
      for (double lp : s.token_lp) recon += lp;
      kl += s.kl;
    }
    CHECK(terms.recon == doctest::Approx(recon).epsilon(1e-5));
    CHECK(terms.kl == doctest::Approx(kl).epsilon(1e-5));
    CHECK(terms.kl_trained == doctest::Approx(kl).epsilon(1e-5));
    CHECK(double(terms.loss.item()) == doctest::Approx(kl - recon).epsilon(1e-5));
    CHECK(terms.tokens == 3 + 1 + 2 + 1 + 5 + 1);
  }
}

TEST_CASE("seqvae: free bits are Σ_d max(λ, batch-mean KL_d) with no gradient below λ") {
  Tape<float> tape;
  const float kl_vals[] = {0.1f, 1.0f, 0.3f,   // sentence 0, dimensions 0..2
                           0.2f, 2.0f, 0.1f};  // sentence 1: means 0.15, 1.5, 0.2
  for (float lambda : {0.f, 0.25f, 0.05f}) {
    CAPTURE(lambda);
    tape.reset();
    Var<float> kl = tape.input(Shape{2, 3}, kl_vals, true);
    Var<float> term = kl_training_term(kl, lambda);
    tape.backward(term);
    const double means[] = {0.15, 1.5, 0.2};
    double expect = 0;
    for (double m : means) expect += lambda > 0 ? 2 * std::max(double(lambda), m) : m * 2;
    CHECK(double(term.item()) == doctest::Approx(expect).epsilon(1e-6));
    for (int b = 0; b < 2; ++b)
      for (int d = 0; d < 3; ++d) {
        const bool free = lambda > 0 && means[d] < lambda;  // dimension d costs λ regardless: no gradient
        CHECK(kl.grad()[b * 3 + d] == doctest::Approx(free ? 0.0 : 1.0));
      }
  }
  // Through the model: kl_trained is the free-bits term of the per-dimension KL the model reports.
  SeqVae model(tiny_config("soft", "additive"));
  model.init(0.6f, 5);
  const std::vector<int> idx = {0, 1, 2};
  const Batch batch = make_batch(kTinyPairs, idx);
  Ctx c{tape, model.ps, true, CounterRng(1, 2), 0.f};
  tape.reset();
  SeqVaeEncoding enc = model.encode(c, batch);
  const int Z = model.config().latent;
  std::vector<double> mean_kl(size_t(Z), 0.0);
  for (int b = 0; b < 3; ++b)
    for (int d = 0; d < Z; ++d) {
      const double mu = enc.mu.val()[b * Z + d], s = enc.sigma.val()[b * Z + d];
      mean_kl[size_t(d)] += (-std::log(s) + 0.5 * (s * s + mu * mu) - 0.5) / 3;
    }
  const float lambda = float(std::max(mean_kl[0], mean_kl[1]) * 0.5 + std::min(mean_kl[0], mean_kl[1]) * 0.5);
  tape.reset();
  KlOptions klo;
  klo.free_bits = lambda, klo.weight = 0.5f;
  const SeqVaeTerms t = model.terms(c, batch, CounterRng(1, 3), klo);
  const double expect = 3 * (std::max(double(lambda), mean_kl[0]) + std::max(double(lambda), mean_kl[1]));
  CHECK(t.kl_trained == doctest::Approx(expect).epsilon(1e-5));
  CHECK(double(t.loss.item()) == doctest::Approx(0.5 * expect - t.recon).epsilon(1e-5));
}

TEST_CASE("seqvae: the KL annealing weight is linear from 0 to 1, and 1 without annealing") {
  CHECK(kl_weight(0, 100) == 0.0);
  CHECK(kl_weight(25, 100) == 0.25);
  CHECK(kl_weight(99, 100) == 0.99);
  CHECK(kl_weight(100, 100) == 1.0);
  CHECK(kl_weight(5000, 100) == 1.0);
  CHECK(kl_weight(0, 0) == 1.0);
  CHECK(kl_weight(7, 0) == 1.0);
}

TEST_CASE("seqvae: active units count the dimensions whose posterior mean varies by more than the threshold") {
  // N = 4 sentences, Z = 4: Var = 0, 0.0121, 0.0081, 1.25 (the 1/N variance).
  const float mu[] = {0.f, -0.11f, -0.09f, 1.f,  //
                      0.f, 0.11f,  0.09f,  2.f,  //
                      0.f, -0.11f, -0.09f, 3.f,  //
                      0.f, 0.11f,  0.09f,  4.f};
  std::vector<double> var;
  CHECK(count_active_units(mu, 4, 4, 0.01, &var) == 2);
  REQUIRE(var.size() == 4);
  CHECK(var[0] == 0.0);
  CHECK(var[1] == doctest::Approx(0.0121).epsilon(1e-6));
  CHECK(var[2] == doctest::Approx(0.0081).epsilon(1e-6));
  CHECK(var[3] == doctest::Approx(1.25).epsilon(1e-9));
  CHECK(count_active_units(mu, 4, 4, 0.005) == 3);
  CHECK(count_active_units(mu, 4, 4, 2.0) == 0);
  CHECK(count_active_units(mu, 0, 4, 0.01) == 0);
}

TEST_CASE("seqvae: padding never changes a sentence's posterior (both encoders)") {
  for (const char* encoder : {"lstm", "transformer"}) {
    CAPTURE(encoder);
    SeqVae model(tiny_config("soft", "additive", encoder));
    model.init(0.5f, 8);
    Tape<float> tape;
    Ctx c{tape, model.ps, false, CounterRng(1, 2), 0.f};
    const std::vector<int> alone = {1}, padded = {2, 1};  // pair 1 (length 2) next to a length-5 sentence
    const Batch b1 = make_batch(kTinyPairs, alone), b2 = make_batch(kTinyPairs, padded);
    SeqVaeEncoding e1 = model.encode(c, b1);
    SeqVaeEncoding e2 = model.encode(c, b2);
    const int Z = model.config().latent;
    for (int d = 0; d < Z; ++d) {
      CHECK(e2.mu.val()[Z + d] == doctest::Approx(e1.mu.val()[d]).epsilon(1e-5));
      CHECK(e2.sigma.val()[Z + d] == doctest::Approx(e1.sigma.val()[d]).epsilon(1e-5));
    }
    // And the decoder's per-token log-probabilities of that sentence, at the same z.
    const float z[] = {0.3f, -0.7f, 0.3f, -0.7f};
    Var<float> lp1 = model.token_log_probs(c, b1, e1, tape.input(Shape{1, Z}, z));
    Var<float> lp2 = model.token_log_probs(c, b2, e2, tape.input(Shape{2, Z}, z));
    for (int t = 0; t < b1.T; ++t) CHECK(lp2.val()[b2.T + t] == doctest::Approx(lp1.val()[t]).epsilon(1e-5));
    for (int t = b1.T; t < b2.T; ++t) CHECK(lp2.val()[b2.T + t] == 0.f);
  }
}

TEST_CASE("seqvae: layer_norm gives the same bits with 1 and 2 threads") {
  const int64_t R = 300, H = 128;  // above the parallel threshold, H ≥ 64 so the γ/β loop splits too
  std::vector<float> x(static_cast<size_t>(R * H)), g(static_cast<size_t>(H)), b(static_cast<size_t>(H));
  std::vector<float> dy(static_cast<size_t>(R * H));
  const CounterRng rng(4, 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(rng.normal(i)), dy[i] = float(rng.normal(i + x.size()));
  for (size_t j = 0; j < g.size(); ++j) g[j] = float(1 + 0.1 * rng.normal(j + 9999999)), b[j] = float(0.1 * j);
  auto run_ln = [&](int threads) {
    omp_set_num_threads(threads);
    Tape<float> tape;
    Var<float> xv = tape.input(Shape{R, H}, x.data(), true), gv = tape.input(Shape{H}, g.data(), true);
    Var<float> bv = tape.input(Shape{H}, b.data(), true);
    Var<float> y = layer_norm(xv, gv, bv);
    const float* seeds[] = {dy.data()};
    tape.backward_seeded(&y, seeds, 1);
    std::vector<float> out(y.val(), y.val() + R * H);
    out.insert(out.end(), xv.grad(), xv.grad() + R * H);
    out.insert(out.end(), gv.grad(), gv.grad() + H);
    out.insert(out.end(), bv.grad(), bv.grad() + H);
    return out;
  };
  const int saved = omp_get_max_threads();
  const std::vector<float> one = run_ln(1), two = run_ln(2);
  omp_set_num_threads(saved);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}

TEST_CASE("seqvae: training gives the same bits with 1 and 2 threads (BiLSTM and Transformer encoders)") {
  SynthCorpus corpus;
  for (const char* encoder : {"lstm", "transformer"}) {
    CAPTURE(encoder);
    SeqVaeTrainOptions o = small_train_options(corpus.dir);
    o.model.encoder = *enum_from_name(kSeqVaeEncoderNames, encoder);
    o.model.score = encoder[0] == 'l' ? SeqVaeScore::additive : SeqVaeScore::multiplicative;
    o.loop.batch_size = 48, o.loop.max_steps = 2, o.free_bits = 0.1, o.kl_anneal = 2;
    o.model.hidden = 32, o.model.attn_size = 16;  // large enough for the kernels to split over 2 threads
    auto train = [&](int threads) {
      omp_set_num_threads(threads);
      o.loop.save = corpus.tmp.file(fmt::format("{}-{}.safetensors", encoder, threads));
      CaptureStdout cap(corpus.tmp.file("stdout"));
      const TrainResult s = train_seqvae(o);
      cap.finish();
      LoadedSeqVae m = load_seqvae(o.loop.save);
      std::vector<float> out(m.model->ps.values(), m.model->ps.values() + m.model->ps.size());
      out.push_back(float(figure(s.loop.kept.figures, "elbo")));
      out.push_back(float(figure(s.loop.kept.figures, "kl")));
      return out;
    };
    const int saved = omp_get_max_threads();
    const std::vector<float> one = train(1), two = train(2);
    omp_set_num_threads(saved);
    REQUIRE(one.size() == two.size());
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("seqvae: a few training steps raise the validation ELBO on the synthetic task") {
  SynthCorpus corpus;
  SeqVaeTrainOptions o = small_train_options(corpus.dir);
  o.loop.max_steps = 36, o.loop.valid_every = 6, o.kl_anneal = 30, o.loop.lr = 1e-2;
  CaptureStdout cap(corpus.tmp.file("stdout"));
  const TrainResult s = train_seqvae(o);
  const std::vector<JsonValue> lines = json_lines(cap.finish());
  // 13 batches an epoch: validations every 6 updates inside an epoch and at each epoch end (13, 26).
  const std::vector<int64_t> steps = {6, 12, 13, 18, 24, 26, 30, 36};
  REQUIRE(s.loop.history.size() == steps.size());
  REQUIRE(lines.size() == steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    CHECK(s.loop.history[k].steps == steps[k]);
    CHECK(lines[k].at("steps").number() == double(steps[k]));
    // The annealing weight of the last update before the validation: update t (0-based) uses min(1, t / 30).
    CHECK(lines[k].at("kl_weight").number() == doctest::Approx(std::min(1.0, double(steps[k] - 1) / 30)));
  }
  const Figures &first = s.loop.history.front().valid.figures, &last = s.loop.history.back().valid.figures;
  INFO("first elbo ", figure(first, "elbo"), ", last elbo ", figure(last, "elbo"));
  CHECK(figure(last, "elbo") > figure(first, "elbo") + 2);  // nats per sentence (about 4 with these settings)
  CHECK(figure(last, "elbo") == doctest::Approx(figure(last, "recon") - figure(last, "kl")));
}

TEST_CASE("seqvae: a missing file, an empty split or a non-model file is one InputError naming the file") {
  SynthCorpus corpus(40, 10);
  const std::string nowhere = corpus.tmp.file("nowhere");
  auto one_line = [](auto&& f) {
    try {
      f();
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
      throw;
    }
  };
  check_input_error([&] { one_line([&] { run(cmd_train, {"train", "--task", "seqvae", "--data", nowhere, "-q"}); }); },
                    nowhere + "/train.en", "cannot open");
  write_file_atomic(corpus.dir + "/valid.en", "");
  check_input_error([&] { one_line([&] { run(cmd_train, {"train", "--task", "seqvae", "--data", corpus.dir, "-q"}); }); },
                    corpus.dir + "/valid.en", "no sentence");
  const std::string junk = corpus.tmp.file("junk.safetensors");
  write_file_atomic(junk, "not a model");
  check_input_error([&] { one_line([&] { run(cmd_eval, {"eval", "--task", "seqvae", "--data", corpus.dir, "--model", junk}); }); },
                    junk);
  // Usage errors: a task only a --config file names (the command line was read as the default task's), a bad
  // choice, an option out of range.
  const std::string config = corpus.tmp.file("seqvae.ini");
  write_file_atomic(config, "task = seqvae\n");
  CHECK_THROWS_AS(run(cmd_train, {"train", "--data", corpus.dir, "--config", config}), UsageError);
  CHECK_THROWS_AS(run(cmd_train, {"train", "--task", "seqvae", "--data", corpus.dir, "--dec-attn", "hard"}), UsageError);
  CHECK_THROWS_AS(
      run(cmd_train, {"train", "--task", "seqvae", "--data", corpus.dir, "--encoder", "transformer", "--heads", "3"}),
      UsageError);
  CHECK_THROWS_AS(run(cmd_train, {"train", "--task", "seqvae", "--data", corpus.dir, "--free-bits", "-1"}), UsageError);
}

TEST_CASE("seqvae cli: train writes JSON validation lines and the best model; eval reads it back") {
  SynthCorpus corpus(60, 12);
  const std::string model = corpus.tmp.file("m.safetensors");
  CaptureStdout cap(corpus.tmp.file("stdout"));
  const int trained = run(cmd_train,
                          {"train", "--task", "seqvae", "--data", corpus.dir, "--epochs", "2", "--batch-size", "16",
                           "--emb-size", "8", "--hidden-size", "8", "--latent-size", "3", "--attn-size", "4",
                           "--free-bits", "0.2", "--save", model, "--format", "json", "-q"});
  const int evaluated = run(cmd_eval, {"eval", "--task", "seqvae", "--data", corpus.dir, "--model", model,
                                              "--samples", "3", "--dims", "--format", "json", "-q"});
  const std::vector<JsonValue> rows = json_lines(cap.finish());
  CHECK(trained == 0);
  CHECK(evaluated == 0);
  REQUIRE(rows.size() == 2 + 1 + 3 + 1);  // 2 epochs + done; 3 latent dimensions + the eval row
  CHECK(rows[0].at("event").str() == "epoch");
  CHECK(rows[2].at("event").str() == "done");
  CHECK(rows[3].at("event").str() == "dim");
  const JsonValue& e = rows.back();
  CHECK(e.at("event").str() == "eval");
  for (const JsonValue* r : {&rows[1], &rows[2], &e}) {
    for (const char* key : {"elbo", "recon", "kl", "active_units", "elbo_per_token", "ppl_bound", "iw"})
      CHECK_MESSAGE(r->at(key).is_number(), key);
    CHECK(r->at("elbo").number() == doctest::Approx(r->at("recon").number() - r->at("kl").number()));
    const double per_sentence = r->at("elbo").number() * r->at("sentences").number() / r->at("tokens").number();
    CHECK(r->at("elbo_per_token").number() == doctest::Approx(per_sentence));
    CHECK(r->at("ppl_bound").number() == doctest::Approx(std::exp(-r->at("elbo_per_token").number())));
  }
  CHECK(e.at("sentences").number() == 20);  // the test split, never length-filtered
  CHECK(e.at("samples").number() == 3);
  CHECK(e.at("latent").number() == 3);
  int active = 0;
  for (int k = 0; k < 3; ++k) active += int(rows[size_t(3 + k)].at("active").number());
  CHECK(e.at("active_units").number() == active);
  // A NaN or infinite weight is refused at load, naming the tensor.
  const std::string bad = corpus.tmp.file("nan.safetensors");
  for (float v : {std::nanf(""), HUGE_VALF}) {
    const std::string tensor = write_non_finite_copy(model, bad, v);
    check_input_error([&] { (void)load_seqvae(bad); }, bad, "parameter \"" + tensor + "\" holds a non-finite value");
  }
}
