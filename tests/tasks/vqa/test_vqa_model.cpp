// The VQA model on a tiny user data set (a .npy of region features and question TSVs,
// tests/tasks/vqa/vqa_fixture.hpp): the KL-gap identity per question for var-enum, every bad-input case,
// bit-identical training steps with 1 and 2 threads. Its evaluation figures against plain loops and a hand-made case
// are in tests/tasks/vqa/test_vqa_eval.cpp, the CLI functions end to end in tests/tasks/vqa/test_vqa_cli.cpp.
#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/json.hpp"
#include "core/rng.hpp"
#include "nn/optim.hpp"
#include "support/check_input_error.hpp"
#include "support/temp_dir.hpp"
#include "tasks/vqa/eval.hpp"
#include "tasks/vqa/model_file.hpp"
#include "tasks/vqa/trainer.hpp"
#include "vqa_tiny_model.hpp"

using namespace lava;
using namespace vqa_test;

TEST_CASE("vqa: var-enum kl_gap equals KL(q || exact posterior) per question; the ELBO objective equals evaluation") {
  TinyVqa d;
  Loaded l = load(d);
  VqaModel model(tiny_config(l, parse_attn_variant("var-enum", "nmt")));
  model.ps.init_uniform(0.8f, 11);
  Tape<float> tape;
  Ctx c{tape, model.ps, false, CounterRng(1, 2), 0.f};
  const VqaBatch batch = make_vqa_batch(l.train, l.train_enc, first(20));
  const VqaScores s = model.scores(c, batch);
  double max_q_change = 0;
  for (int b = 0; b < s.B; ++b) {
    // log p(y) = logsumexp_i (log p_i + log f_iy); ELBO = Σ_i q_i (log f_iy + log p_i − log q_i);
    // KL(q || posterior) = Σ_i q_i (log q_i − log π_i), π_i = p_i f_iy / p(y)
    const int y = batch.answer[size_t(b)];
    std::vector<double> joint(size_t(s.R));
    double m = -INFINITY, acc = 0, elbo = 0, kl_post = 0;
    for (int i = 0; i < s.R; ++i) {
      joint[size_t(i)] = double(s.log_prior[size_t(b * s.R + i)]) + s.log_f[size_t((b * s.R + i) * s.V + y)];
      m = std::max(m, joint[size_t(i)]);
    }
    for (double j : joint) acc += std::exp(j - m);
    const double log_p = m + std::log(acc);
    for (int i = 0; i < s.R; ++i) {
      const double lq = s.log_q[size_t(b * s.R + i)], q = std::exp(lq);
      elbo += q * (joint[size_t(i)] - lq);
      kl_post += q * (lq - (joint[size_t(i)] - log_p));
      max_q_change = std::max(max_q_change, std::abs(lq - double(s.log_prior[size_t(b * s.R + i)])));
    }
    // The evaluation code's kl_gap (log p − ELBO) for this question alone, against the direct KL(q || posterior).
    VqaScores one;
    one.B = 1, one.R = s.R, one.V = s.V;
    one.log_prior.assign(s.log_prior.begin() + b * s.R, s.log_prior.begin() + (b + 1) * s.R);
    one.log_q.assign(s.log_q.begin() + b * s.R, s.log_q.begin() + (b + 1) * s.R);
    one.log_f.assign(s.log_f.begin() + b * s.R * s.V, s.log_f.begin() + (b + 1) * s.R * s.V);
    VqaEvalSums sums;
    score_vqa_batch(parse_attn_variant("var-enum", "nmt"), one, {&l.train.questions[size_t(b)]},
                    &batch.answer[size_t(b)], l.answers, sums);
    const VqaEvalFigures fb = vqa_figures(sums, true);
    CAPTURE(b);
    CHECK(std::abs(fb.kl_gap - kl_post) < 1e-4);
    CHECK(std::abs(fb.nll + log_p) < 1e-5);
    CHECK(std::abs(fb.elbo - elbo) < 1e-5);
    CHECK(std::abs((log_p - elbo) - kl_post) < 1e-4);
    CHECK(kl_post >= -1e-6);
  }
  CHECK(max_q_change > 1e-3);  // q is its own distribution, not the prior

  const VqaEvalFigures f = evaluate_vqa(model, l.train, l.train_enc, l.answers, 7, 20);
  CHECK(std::abs(f.kl_gap - f.kl_posterior) < 1e-4);
  CHECK(f.identity_error < 1e-4);
  CHECK(f.kl_gap > 0);
  tape.reset();
  const ObjectiveTerms terms = model.objective(c, batch, ObjectiveOptions{});
  CHECK(terms.value_sum / 20 == doctest::Approx(f.elbo).epsilon(1e-5));
}

TEST_CASE("vqa: bad input is one InputError naming the file (and line)") {
  TinyVqa d;
  const std::string qdir = d.questions;
  SUBCASE("a question names an image out of range") {
    write_file_atomic(qdir + "/train.questions.tsv", "0\ta b\tred\n12\ta b\tred\n");
    check_input_error([&] { load_vqa_split(d.data(), "train"); }, qdir + "/train.questions.tsv:2", "image index 12");
  }
  SUBCASE("a region out of range") {
    write_file_atomic(qdir + "/valid.questions.tsv", "0\ta b\tred\t\t\t4\n");
    check_input_error([&] { load_vqa_split(d.data(), "valid"); }, qdir + "/valid.questions.tsv:1", "region");
  }
  SUBCASE("an empty split") {
    write_file_atomic(qdir + "/valid.questions.tsv", "# image\tquestion\tanswer\n\n");
    check_input_error([&] { load_vqa_split(d.data(), "valid"); }, qdir + "/valid.questions.tsv", "no questions");
  }
  SUBCASE("a missing split file") {
    std::filesystem::remove(qdir + "/test.questions.tsv");
    check_input_error([&] { load_vqa_split(d.data(), "test"); }, qdir + "/test.questions.tsv");
  }
  SUBCASE("a {split} pattern and per-split features") {
    VqaDataOptions o{"", d.features, qdir + "/{split}.questions.tsv", ""};
    CHECK(load_vqa_split(o, "valid").questions.size() == 10);
    o.features = d.tmp.file("{split}.npy");
    check_input_error([&] { load_vqa_split(o, "valid"); }, d.tmp.file("valid.npy"));
    o.questions = qdir + "/valid.questions.tsv";  // one file for every split: ambiguous
    CHECK_THROWS_AS(load_vqa_split(o, "valid"), UsageError);
  }
  SUBCASE("features that are not finite, or do not fit the model") {
    std::vector<float> f(size_t(d.images) * size_t(d.regions) * size_t(d.dim), 0.5f);
    f[size_t(2 * d.regions * d.dim + d.dim + 3)] = NAN;  // image 2, region 1, feature 3
    write_npy(d.features, {d.images, d.regions, d.dim}, f.data());
    Loaded l = load(d);
    check_input_error([&] { make_vqa_batch(l.train, l.train_enc, first(8)); }, d.features, "image 2 region 1");
    VqaConfig c = tiny_config(l, parse_attn_variant("soft", "nmt"));
    c.feature_dim += 1;
    check_input_error([&] { check_vqa_features(c, l.train); }, d.features, "trained on");
  }
  SUBCASE("neither or both data sources is a usage error") {
    CHECK_THROWS_AS(load_vqa_split(VqaDataOptions{}, "train"), UsageError);
    CHECK_THROWS_AS(load_vqa_split(VqaDataOptions{"dir", d.features, qdir, ""}, "train"), UsageError);
  }
  SUBCASE("a model file that is not a VQA model, or has a broken answer list") {
    Loaded l = load(d);
    VqaModel model(tiny_config(l, parse_attn_variant("soft", "nmt")));
    const std::string path = d.tmp.file("m.safetensors");
    save_vqa(path, model, l.words, l.answers, {{"task", "nmt"}});
    check_input_error([&] { load_vqa(path); }, path, "not a VQA model");
    save_vqa(path, model, l.words, l.answers, {{"answer_list", "red\nred\n"}});
    check_input_error([&] { load_vqa(path); }, path, "repeats");
  }
}

TEST_CASE("vqa: training steps are bit-identical with 1 and 2 threads") {
  TinyVqa d(16, 9, 64, 64);
  Loaded l = load(d);
  auto train_steps = [&](int threads) {
    omp_set_num_threads(threads);
    VqaConfig cfg = tiny_config(l, parse_attn_variant("var-sample", "nmt"));
    cfg.hidden = 64, cfg.mlp = 64, cfg.attn_size = 32, cfg.dropout = 0.3f;
    VqaModel model(cfg);
    model.ps.init_uniform(0.1f, 5);
    Adam<float> adam;
    Tape<float> tape;
    for (int step = 0; step < 3; ++step) {
      tape.reset();
      Ctx c{tape, model.ps, true, CounterRng(3, uint64_t(step)), cfg.dropout};
      const VqaBatch batch = make_vqa_batch(l.train, l.train_enc, vqa_train_batches(64, 64, 1, step)[0]);
      Var<float> loss = affine(model.objective(c, batch, {}).objective, -1.f / 64, 0.f);
      tape.backward(loss);
      adam.step(model.ps, clip_factor(grad_norm(model.ps), 5.f));
    }
    return std::vector<float>(model.ps.values(), model.ps.values() + model.ps.size());
  };
  const int saved = omp_get_max_threads();
  const std::vector<float> one = train_steps(1), two = train_steps(2);
  omp_set_num_threads(saved);
  REQUIRE(one.size() == two.size());
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}
