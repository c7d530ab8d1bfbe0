// Posterior collapse confined to some question types (attention/collapse_monitor.hpp, tasks/vqa/eval.hpp): H(q)
// per type against a hand computation, the verdict on the type where q equals p and not on the one where it does
// not, and `lava eval --task vqa` warning once per collapsed type.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/cli_runner.hpp"
#include "tasks/vqa/eval.hpp"
#include "vqa_fixture.hpp"

using namespace lava;

namespace {

double entropy_of(const std::vector<double>& p) {
  double h = 0;
  for (double x : p) h -= x * std::log(x);
  return h;
}

}  // namespace

TEST_CASE("vqa collapse: q equal to the prior on one question type is flagged there, with H(q) by hand") {
  // 4 questions, 3 regions, answers {a, b}: two "where" questions whose q is their prior, two "what_at" questions
  // whose q is sharp on another region.
  AnswerVocab answers = AnswerVocab::from_text("a\nb\n", "test");
  VqaScores s;
  s.B = 4, s.R = 3, s.V = 2;
  const std::vector<std::vector<double>> prior = {{.5, .3, .2}, {.2, .6, .2}, {.4, .4, .2}, {.1, .1, .8}};
  const std::vector<std::vector<double>> q_sharp = {{.9, .05, .05}, {.05, .05, .9}};
  for (int b = 0; b < 4; ++b) {
    for (int i = 0; i < 3; ++i) {
      s.log_prior.push_back(float(std::log(prior[size_t(b)][size_t(i)])));
      s.log_q.push_back(float(std::log(b < 2 ? prior[size_t(b)][size_t(i)] : q_sharp[size_t(b - 2)][size_t(i)])));
      for (double f : {.7, .3}) s.log_f.push_back(float(std::log(f)));
    }
  }
  VqaQuestion q0{0, {"x"}, "a", {}, "where", {0}}, q1{0, {"x"}, "b", {}, "where", {1}};
  VqaQuestion q2{0, {"x"}, "a", {}, "what_at", {0}}, q3{0, {"x"}, "a", {}, "what_at", {2}};
  const std::vector<const VqaQuestion*> qs = {&q0, &q1, &q2, &q3};
  const int32_t ids[] = {0, 1, 0, 0};
  VqaEvalSums sums;
  score_vqa_batch(parse_attn_variant("var-enum", "nmt"), s, qs, ids, answers, sums);
  const VqaEvalFigures f = vqa_figures(sums, true);
  REQUIRE(f.per_type.size() == 2);
  const VqaFigures& what_at = f.per_type[0].figures;
  const VqaFigures& where = f.per_type[1].figures;
  REQUIRE(f.per_type[1].qtype == "where");
  // H(q) per question, by hand (floats in, so 1e-6).
  CHECK(where.q_entropy == doctest::Approx((entropy_of(prior[0]) + entropy_of(prior[1])) / 2).epsilon(1e-6));
  CHECK(where.q_entropy == doctest::Approx(where.entropy).epsilon(1e-6));
  CHECK(what_at.q_entropy == doctest::Approx((entropy_of(q_sharp[0]) + entropy_of(q_sharp[1])) / 2).epsilon(1e-6));
  CHECK(where.kl < 1e-6);
  CHECK(where.q_collapsed());
  CHECK_FALSE(what_at.q_collapsed());
  CHECK_FALSE(f.q_collapsed());  // over all questions q is informative: the totals hide the collapsed type
  CHECK(f.q_entropy == doctest::Approx((2 * where.q_entropy + 2 * what_at.q_entropy) / 4).epsilon(1e-9));
  // Without q: no H(q), no verdict.
  VqaScores no_q = s;
  no_q.log_q.clear();
  VqaEvalSums sums_no_q;
  score_vqa_batch(parse_attn_variant("marginal", "nmt"), no_q, qs, ids, answers, sums_no_q);
  const VqaEvalFigures g = vqa_figures(sums_no_q, false);
  CHECK(std::isnan(g.q_entropy));
  CHECK_FALSE(g.per_type[1].figures.q_collapsed());
}

TEST_CASE("vqa collapse: lava eval warns once per question type where q sits on the prior") {
  vqa_test::TinyVqa d;
  const std::string data = " --features " + d.features + " --questions " + d.questions;
  const std::string train = "train --task vqa" + data + " --epochs 1 --batch-size 8 --hidden-size 8 --mlp-size 8"
                            " --attn-size 4 --emb-size 4 --format json -q --threads 1";
  // init 0.01: every score near 0, so q and p are both near uniform on every type (the test split: 7 questions
  // about even regions, 3 about odd ones).
  const std::string model = d.tmp.file("collapsed.safetensors");
  REQUIRE(run_lava(train + " --attn var-enum --init 0.01 --save " + model).code == 0);
  CliResult r = run_lava("eval --task vqa" + data + " --model " + model + " --format json -q");
  REQUIRE(r.code == 0);
  INFO(r.err);
  CHECK(r.err.find("lava eval: warning: the 7 'even' questions: q has collapsed onto the prior") != std::string::npos);
  CHECK(r.err.find("lava eval: warning: the 3 'odd' questions: q has collapsed onto the prior") != std::string::npos);
  CHECK(r.err.find("lava eval: warning: all 10 questions: q has collapsed") != std::string::npos);
  CHECK(r.err_lines() == 3);
  CHECK(r.out.find("\"q_entropy\":") != std::string::npos);
  // No q, no warning.
  const std::string marginal = d.tmp.file("marginal.safetensors");
  REQUIRE(run_lava(train + " --attn marginal --init 0.01 --save " + marginal).code == 0);
  r = run_lava("eval --task vqa" + data + " --model " + marginal + " --format json -q");
  REQUIRE(r.code == 0);
  CHECK(r.err.find("collapsed") == std::string::npos);
  CHECK(r.out.find("\"q_entropy\":null") != std::string::npos);
}
