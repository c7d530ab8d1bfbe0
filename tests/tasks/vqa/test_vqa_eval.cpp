// The VQA evaluation figures against independent computations: nll, accuracy and the per-type figures of the model on
// the tiny data set (tests/tasks/vqa/vqa_tiny_model.hpp) recomputed with plain loops in double, and accuracy, VQA
// score, unseen answers and region accuracy of a hand-made case. The model itself:
// tests/tasks/vqa/test_vqa_model.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "tasks/vqa/eval.hpp"
#include "vqa_tiny_model.hpp"

using namespace lava;
using namespace vqa_test;

namespace {

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

TEST_CASE("vqa: nll and accuracy agree with a plain-loop recomputation in double (marginal and soft)") {
  TinyVqa d;
  Loaded l = load(d);
  for (AttnVariant v : {parse_attn_variant("marginal", "nmt"), parse_attn_variant("soft", "nmt"),
                        parse_attn_variant("var-sample", "nmt")}) {
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
  score_vqa_batch(parse_attn_variant("var-enum", "nmt"), s, qs, ids, answers, sums);
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
  score_vqa_batch(parse_attn_variant("marginal", "nmt"), no_q, qs, ids, answers, sums2);
  CHECK(std::isnan(vqa_figures(sums2, false).region_acc_q));
  CHECK(vqa_figures(sums2, false).kl == doctest::Approx(0.0));
}
