// The VQA model on a tiny user data set (a .npy of region features and question TSVs, tests/vqa_fixture.hpp): the
// KL-gap identity per question for var-enum, nll and accuracy recomputed with plain loops in double, the
// region-attention figures of a hand-made case, every bad-input case, bit-identical training steps with 1 and 2
// threads. The CLI functions end to end are in tests/test_vqa_cli.cpp.
#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "check_input_error.hpp"
#include "cli/cmd_vqa.hpp"
#include "core/atomic_file.hpp"
#include "core/rng.hpp"
#include "tasks/vqa/eval.hpp"
#include "tasks/vqa/model_file.hpp"
#include "tasks/vqa/trainer.hpp"
#include "nn/optim.hpp"
#include "core/json.hpp"
#include "temp_dir.hpp"
#include "vqa_fixture.hpp"

using namespace lava;
using vqa_test::TinyVqa;

namespace {

struct Loaded {
  VqaSplit train, test;
  Vocab words;
  AnswerVocab answers;
  VqaEncoded train_enc, test_enc;
};

Loaded load(const TinyVqa& d) {
  Loaded l{load_vqa_split(d.data(), "train"), load_vqa_split(d.data(), "test"), {}, {}, {}, {}};
  l.words = build_question_vocab(l.train.questions);
  l.answers = AnswerVocab::build(l.train.questions);
  l.train_enc = encode_vqa(l.train.questions, l.words, l.answers);
  l.test_enc = encode_vqa(l.test.questions, l.words, l.answers);
  return l;
}

VqaConfig tiny_config(const Loaded& l, AttnVariant v) {
  VqaConfig c;
  c.attn = v;
  c.words = l.words.size(), c.answers = l.answers.size();
  c.regions = l.train.features->num_regions(), c.feature_dim = l.train.features->dim();
  c.emb = 5, c.hidden = 7, c.attn_size = 4, c.mlp = 6, c.answer_emb = 3, c.dropout = 0.f;
  return c;
}

std::vector<int> first(int n) {
  std::vector<int> idx(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) idx[size_t(i)] = i;
  return idx;
}

// The model's forward pass again, with plain loops in double from the parameters by name.
struct PlainVqa {
  const VqaModel& m;
  std::map<std::string, const float*> params;
  explicit PlainVqa(VqaModel& model) : m(model) {
    for (const auto& prm : model.ps.params()) params[prm.name] = model.ps.values() + prm.offset;
  }
  const float* p(const std::string& name) const {
    auto it = params.find(name);
    REQUIRE(it != params.end());
    return it->second;
  }
  static double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

  // log p(y = a | question) for every answer a, and the prior p (R).
  std::vector<double> predictive(const std::vector<int32_t>& words, const float* feats,
                                 std::vector<double>& prior) const {
    const VqaConfig& c = m.config();
    const int E = c.emb, H = c.hidden, A = c.attn_size, M = c.mlp, V = c.answers, R = c.regions, D = c.feature_dim;
    const float *P_answer_mlp_out_W = p("answer_mlp/out/W"),
                *P_answer_mlp_out_b = p("answer_mlp/out/b"),
                *P_answer_mlp_question_W = p("answer_mlp/question/W"),
                *P_answer_mlp_question_b = p("answer_mlp/question/b"),
                *P_answer_mlp_region_W = p("answer_mlp/region/W"),
                *P_prior_W1 = p("prior/W1"),
                *P_prior_W2 = p("prior/W2"),
                *P_prior_w = p("prior/w"),
                *P_question_W_hh = p("question/W_hh"),
                *P_question_W_ih = p("question/W_ih"),
                *P_question_b = p("question/b"),
                *P_region_W = p("region/W"),
                *P_region_b = p("region/b"),
                *P_word_emb = p("word_emb");
    // question LSTM: gates = x W_ih + h W_hh + b, order (i, f, g, o)
    std::vector<double> h(size_t(H), 0), cell(size_t(H), 0), gates(size_t(4 * H));
    for (int32_t w : words) {
      for (int j = 0; j < 4 * H; ++j) {
        double g = P_question_b[j];
        for (int e = 0; e < E; ++e) g += double(P_word_emb[w * E + e]) * P_question_W_ih[e * 4 * H + j];
        for (int k = 0; k < H; ++k) g += h[size_t(k)] * P_question_W_hh[k * 4 * H + j];
        gates[size_t(j)] = g;
      }
      for (int k = 0; k < H; ++k) {
        cell[size_t(k)] = sigmoid(gates[size_t(H + k)]) * cell[size_t(k)] +
                          sigmoid(gates[size_t(k)]) * std::tanh(gates[size_t(2 * H + k)]);
        h[size_t(k)] = sigmoid(gates[size_t(3 * H + k)]) * std::tanh(cell[size_t(k)]);
      }
    }
    // x_i = relu(r_i W_r + b_r)
    std::vector<double> x(size_t(R) * size_t(H));
    for (int i = 0; i < R; ++i)
      for (int k = 0; k < H; ++k) {
        double s = P_region_b[k];
        for (int d = 0; d < D; ++d) s += double(feats[i * D + d]) * P_region_W[d * H + k];
        x[size_t(i * H + k)] = std::max(s, 0.0);
      }
    // prior_i ∝ exp(wᵀ tanh(x_i W1 + x̃ W2))
    prior.assign(size_t(R), 0);
    double z = 0;
    for (int i = 0; i < R; ++i) {
      double score = 0;
      for (int a = 0; a < A; ++a) {
        double t = 0;
        for (int k = 0; k < H; ++k)
          t += x[size_t(i * H + k)] * P_prior_W1[k * A + a] + h[size_t(k)] * P_prior_W2[k * A + a];
        score += std::tanh(t) * P_prior_w[a];
      }
      z += (prior[size_t(i)] = std::exp(score));
    }
    for (double& v : prior) v /= z;
    // f(x, w)_a = softmax(relu(x̃ W_q + b_q + Σ_i w_i x_i W_x) W_g + b_g)_a
    auto log_f = [&](const std::vector<double>& w) {
      std::vector<double> o(static_cast<size_t>(M)), logits(static_cast<size_t>(V));
      for (int j = 0; j < M; ++j) {
        double s = P_answer_mlp_question_b[j];
        for (int k = 0; k < H; ++k) s += h[size_t(k)] * P_answer_mlp_question_W[k * M + j];
        for (int i = 0; i < R; ++i)
          for (int k = 0; k < H; ++k) s += w[size_t(i)] * x[size_t(i * H + k)] * P_answer_mlp_region_W[k * M + j];
        o[size_t(j)] = std::max(s, 0.0);
      }
      double mx = -INFINITY, sum = 0;
      for (int a = 0; a < V; ++a) {
        double s = P_answer_mlp_out_b[a];
        for (int j = 0; j < M; ++j) s += o[size_t(j)] * P_answer_mlp_out_W[j * V + a];
        mx = std::max(mx, logits[size_t(a)] = s);
      }
      for (double l : logits) sum += std::exp(l - mx);
      for (double& l : logits) l -= mx + std::log(sum);
      return logits;
    };
    if (!variant_info(c.attn).latent) return log_f(prior);
    std::vector<double> out(size_t(V), 0);
    for (int i = 0; i < R; ++i) {
      std::vector<double> onehot(size_t(R), 0);
      onehot[size_t(i)] = 1;
      const std::vector<double> lf = log_f(onehot);
      for (int a = 0; a < V; ++a) out[size_t(a)] += prior[size_t(i)] * std::exp(lf[size_t(a)]);
    }
    for (double& v : out) v = std::log(v);
    return out;
  }
};

}  // namespace

TEST_CASE("vqa: var-enum kl_gap equals KL(q || exact posterior) per question; the ELBO objective equals evaluation") {
  TinyVqa d;
  Loaded l = load(d);
  VqaModel model(tiny_config(l, AttnVariant::var_enum));
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
    score_vqa_batch(AttnVariant::var_enum, one, {&l.train.questions[size_t(b)]}, &batch.answer[size_t(b)], l.answers,
                    sums);
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

TEST_CASE("vqa: nll and accuracy agree with a plain-loop recomputation in double (marginal and soft)") {
  TinyVqa d;
  Loaded l = load(d);
  for (AttnVariant v : {AttnVariant::marginal, AttnVariant::soft, AttnVariant::var_sample}) {
    VqaModel model(tiny_config(l, v));
    model.ps.init_uniform(1.0f, 5);
    const VqaEvalFigures f = evaluate_vqa(model, l.test, l.test_enc, l.answers, 4);
    PlainVqa plain(model);
    // The predictive distribution behind accuracy, for every answer, from the model's own batch scores.
    Tape<float> tape;
    Ctx c{tape, model.ps, false, CounterRng(1, 2), 0.f};
    const VqaScores s = model.scores(c, make_vqa_batch(l.test, l.test_enc, first(10)));
    std::vector<double> predictive(static_cast<size_t>(s.V));
    double nll = 0, known = 0, correct = 0, entropy = 0, max_diff = 0;
    std::map<std::string, std::array<double, 3>> by_type;  // qtype -> (questions, known-answer nll sum, known)
    std::map<std::string, double> right_by_type;
    std::vector<float> feats(size_t(d.regions) * size_t(d.dim));
    for (size_t k = 0; k < l.test.questions.size(); ++k) {
      const VqaQuestion& q = l.test.questions[k];
      l.test.features->get(q.image, feats.data());
      std::vector<double> prior;
      const std::vector<double> lp = plain.predictive(l.test_enc.words[k], feats.data(), prior);
      vqa_predictive(v, s, int(k), predictive.data());
      for (int a = 0; a < s.V; ++a) max_diff = std::max(max_diff, std::abs(predictive[size_t(a)] - lp[size_t(a)]));
      const int guess = int(std::max_element(lp.begin(), lp.end()) - lp.begin());
      correct += l.answers.answer(guess) == q.answer;
      by_type[q.qtype][0] += 1;
      right_by_type[q.qtype] += l.answers.answer(guess) == q.answer;
      const int y = l.test_enc.answer[k];
      if (y < 0) continue;
      known += 1;
      nll -= lp[size_t(y)];
      by_type[q.qtype][1] -= lp[size_t(y)];
      by_type[q.qtype][2] += 1;
      for (double p : prior) entropy -= p * std::log(p);
    }
    CAPTURE(variant_info(v).name);
    CHECK(f.questions == 10);
    CHECK(f.unseen == 1);  // "green"
    CHECK(f.nll == doctest::Approx(nll / known).epsilon(1e-5));
    CHECK(f.accuracy == correct / 10);
    CHECK(f.entropy == doctest::Approx(entropy / known).epsilon(1e-5));
    CHECK(max_diff < 1e-5);
    // Per type ("even" and "odd" regions), each recomputed on its own; every question has one region, so both
    // types are single-region and the subset is all of them.
    REQUIRE(f.per_type.size() == by_type.size());
    for (const VqaEvalFigures::PerType& t : f.per_type) {
      CAPTURE(t.qtype);
      const auto& [n, type_nll, type_known] = by_type.at(t.qtype);
      CHECK(t.single_region);
      CHECK(t.figures.questions == n);
      CHECK(t.figures.accuracy == doctest::Approx(right_by_type.at(t.qtype) / n));
      CHECK(t.figures.nll == doctest::Approx(type_nll / type_known).epsilon(1e-5));
    }
    CHECK(f.single_region.questions == 10);
    CHECK(f.single_region.nll == doctest::Approx(f.nll).epsilon(1e-12));
    CHECK(f.single_region.accuracy == f.accuracy);
  }
}

TEST_CASE("vqa: accuracy, VQA score, unseen answers and region accuracy of a hand-made case") {
  // 4 questions, 3 regions, answers {a, b}. Rows: log p (R), log f (R, V), log q (R).
  AnswerVocab answers = AnswerVocab::from_text("a\nb\n", "test");
  VqaScores s;
  s.B = 4, s.R = 3, s.V = 2;
  auto L = [](double x) { return float(std::log(x)); };
  // q0: prior argmax 0; f favours b at region 2 -> posterior argmax 2 (0.5·0.1 vs 0.2·0.9); q argmax 2; region 2.
  // q1: prior argmax 1, posterior argmax 1; q argmax 0; region 1.
  // q2: two annotated regions: not a region question.  q3: answer unseen: not a region question, counted wrong.
  s.log_prior = {L(.5), L(.3), L(.2), L(.2), L(.6), L(.2), L(.4), L(.4), L(.2), L(.1), L(.1), L(.8)};
  s.log_f = {L(.9), L(.1), L(.9), L(.1), L(.1), L(.9),   // question 0: regions 0, 1, 2 over (a, b)
             L(.5), L(.5), L(.8), L(.2), L(.5), L(.5),   // question 1
             L(.7), L(.3), L(.7), L(.3), L(.7), L(.3),   // question 2
             L(.5), L(.5), L(.5), L(.5), L(.5), L(.5)};  // question 3
  s.log_q = {L(.1), L(.1), L(.8), L(.7), L(.2), L(.1), L(.3), L(.3), L(.4), L(.1), L(.1), L(.8)};
  VqaQuestion q0{0, {"x"}, "b", {{"b", 2}, {"a", 9}}, "t1", {2}};
  VqaQuestion q1{0, {"x"}, "a", {}, "t1", {1}};
  VqaQuestion q2{0, {"x"}, "a", {{"a", 4}}, "t2", {0, 1}};
  VqaQuestion q3{0, {"x"}, "zzz", {}, "", {0}};
  const std::vector<const VqaQuestion*> qs = {&q0, &q1, &q2, &q3};
  const int32_t ids[] = {1, 0, 0, -1};
  VqaEvalSums sums;
  score_vqa_batch(AttnVariant::var_enum, s, qs, ids, answers, sums);
  const VqaEvalFigures f = vqa_figures(sums, true);
  // predictive: q0 p(a) = .5·.9 + .3·.9 + .2·.1 = .74 -> "a" (wrong); q1 p(a) = .2·.5 + .6·.8 + .2·.5 = .68 -> "a";
  // q2 -> "a"; q3: a tie .5/.5 -> the lower id "a", wrong ("zzz").
  CHECK(f.accuracy == doctest::Approx(0.5));
  CHECK(f.unseen == 1);
  // VQA score over q0 (guess "a": 9 annotators -> 1) and q2 (guess "a": 4 -> 1)
  CHECK(f.vqa_score == doctest::Approx(1.0));
  CHECK(f.region_questions == 2);
  CHECK(f.region_acc_prior == doctest::Approx(0.5));      // q0: 0 ≠ 2; q1: 1 = 1
  CHECK(f.region_acc_posterior == doctest::Approx(1.0));  // q0: .05/.03/.18 -> 2; q1: .1/.48/.1 -> 1
  CHECK(f.region_acc_q == doctest::Approx(0.5));          // q0: 2 = 2; q1: 0 ≠ 1
  // nll over the 3 known answers: −(log .26 + log .68 + log .7) / 3
  CHECK(f.nll == doctest::Approx(-(std::log(.26) + std::log(.68) + std::log(.7)) / 3).epsilon(1e-6));
  REQUIRE(f.per_type.size() == 3);
  CHECK(f.per_type[0].qtype == "t1");
  CHECK(f.per_type[0].figures.accuracy == doctest::Approx(0.5));
  CHECK(f.per_type[2].qtype == "untyped");
  CHECK(f.per_type[2].figures.accuracy == 0);
  // Per type, by hand: t1 = q0, q1 (one region each), t2 = q2 (two regions), untyped = q3 (one region, unseen).
  const double l0 = std::log(.26), l1 = std::log(.68), l2 = std::log(.7);
  CHECK(f.per_type[0].single_region);
  CHECK_FALSE(f.per_type[1].single_region);
  CHECK(f.per_type[2].single_region);
  CHECK(f.per_type[0].figures.nll == doctest::Approx(-(l0 + l1) / 2).epsilon(1e-6));
  CHECK(f.per_type[1].figures.nll == doctest::Approx(-l2).epsilon(1e-6));
  CHECK(std::isnan(f.per_type[2].figures.nll));  // its one answer is unseen: no likelihood
  CHECK(f.per_type[2].figures.unseen == 1);
  CHECK(f.per_type[1].figures.accuracy == 1);
  // The known-answer-weighted mean of the per-type nll is the overall nll.
  CHECK((2 * f.per_type[0].figures.nll + f.per_type[1].figures.nll) / 3 == doctest::Approx(f.nll).epsilon(1e-6));
  // The single-region subset: t1 and untyped, 3 questions, 1 right (q1), nll over q0 and q1.
  CHECK(f.single_region_types == std::vector<std::string>{"t1", "untyped"});
  CHECK(f.single_region.questions == 3);
  CHECK(f.single_region.unseen == 1);
  CHECK(f.single_region.accuracy == doctest::Approx(1.0 / 3));
  CHECK(f.single_region.nll == doctest::Approx(-(l0 + l1) / 2).epsilon(1e-6));
  CHECK(f.single_region.region_acc_posterior == doctest::Approx(1.0));
  CHECK(f.per_type[0].figures.kl >= 0);
  // Without q: no q figure.
  VqaScores no_q = s;
  no_q.log_q.clear();
  VqaEvalSums sums2;
  score_vqa_batch(AttnVariant::marginal, no_q, qs, ids, answers, sums2);
  CHECK(std::isnan(vqa_figures(sums2, false).region_acc_q));
  CHECK(vqa_figures(sums2, false).kl == doctest::Approx(0.0));
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
    VqaConfig c = tiny_config(l, AttnVariant::soft);
    c.feature_dim += 1;
    check_input_error([&] { check_vqa_features(c, l.train); }, d.features, "trained on");
  }
  SUBCASE("neither or both data sources is a usage error") {
    CHECK_THROWS_AS(load_vqa_split(VqaDataOptions{}, "train"), UsageError);
    CHECK_THROWS_AS(load_vqa_split(VqaDataOptions{"dir", d.features, qdir, ""}, "train"), UsageError);
  }
  SUBCASE("a model file that is not a VQA model, or has a broken answer list") {
    Loaded l = load(d);
    VqaModel model(tiny_config(l, AttnVariant::soft));
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
    VqaConfig cfg = tiny_config(l, AttnVariant::var_sample);
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
