// sat-hard's estimator (attention/variants/sat_hard.hpp) on a small case: with λ_r = 1, no entropy bonus and no
// expected context, the mean of its gradient over many draws is the gradient of the Jensen bound Σ_t Σ_i α_ti log f_i,
// computed exactly by enumeration (attention_objective with hard-enum), whatever the baseline. Without the
// REINFORCE term the same check fails (the test can tell a biased estimator).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attention/variants/sat_hard.hpp"
#include "core/rng.hpp"

using namespace lava;

namespace {

constexpr int B = 1, T = 2, S = 3, Hd = 3, V = 4;
const int32_t kY[B * T] = {1, 3};
const float kMask[B * T] = {1, 1};

struct Small {
  ParamStore<float> ps;
  int scores, query, memory, W, b;
  Small() {
    scores = ps.add("scores", Shape{B, T, S});
    query = ps.add("query", Shape{B, T, Hd});
    memory = ps.add("memory", Shape{B, S, Hd});
    W = ps.add("W", Shape{Hd, V});
    b = ps.add("b", Shape{V});
    ps.init_uniform(1.5f, 11);
  }
  OutputHead head(Ctx& c) { return {c.p(query), c.p(memory), c.p(W), c.p(b)}; }
};

// The estimator's mean gradient over `draws` and its standard error, per parameter element.
void estimate(Small& m, const SatHardOptions& opt, int draws, std::vector<double>& mean, std::vector<double>& se) {
  const size_t n = m.ps.size();
  std::vector<double> sum(n, 0.0), sum2(n, 0.0);
  Tape<float> tape;
  for (int d = 0; d < draws; ++d) {
    tape.reset();
    m.ps.zero_grad();
    Ctx c{tape, m.ps, true, CounterRng(7, 1).child(uint64_t(d)), 0.f};
    const ObjectiveTerms t = sat_hard_objective(c, m.head(c), log_softmax(c.p(m.scores), -1), kY, kMask, -1.3f, opt);
    tape.backward(t.objective);
    for (size_t i = 0; i < n; ++i) sum[i] += m.ps.grads()[i], sum2[i] += double(m.ps.grads()[i]) * m.ps.grads()[i];
  }
  mean.resize(n), se.resize(n);
  for (size_t i = 0; i < n; ++i) {
    mean[i] = sum[i] / draws;
    se[i] = std::sqrt(std::max(0.0, sum2[i] / draws - mean[i] * mean[i]) / draws);
  }
}

std::vector<double> exact(Small& m) {
  Tape<float> tape;
  m.ps.zero_grad();
  Ctx c{tape, m.ps, true, CounterRng(7, 2), 0.f};
  AttentionDists d;
  d.log_prior = log_softmax(c.p(m.scores), -1);
  d.scores = c.p(m.scores);
  const ObjectiveTerms t =
      attention_objective(c, parse_attn_variant("hard-enum", "nmt"), m.head(c), d, kY, kMask, ObjectiveOptions{});
  tape.backward(t.objective);
  return {m.ps.grads(), m.ps.grads() + m.ps.size()};
}

// The largest |mean − exact| / (standard error + 1e-4) over every parameter element.
double worst_z(Small& m, const SatHardOptions& opt) {
  const std::vector<double> want = exact(m);
  std::vector<double> mean, se;
  estimate(m, opt, 10000, mean, se);
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(mean[i] - want[i]) / (se[i] + 1e-4));
  return worst;
}

}  // namespace

TEST_CASE("caption sat-hard: the estimator is unbiased for the Jensen bound's gradient (against enumeration)") {
  Small m;
  SatHardOptions opt;
  opt.reinforce = 1, opt.entropy = 0, opt.p_expected = 0;
  const double z = worst_z(m, opt);
  CAPTURE(z);
  CHECK(z < 5.0);
  opt.reinforce = 0;  // without the score-function term the prior's scores get no gradient: biased
  const double z_biased = worst_z(m, opt);
  CAPTURE(z_biased);
  CHECK(z_biased > 20.0);
}

TEST_CASE("caption sat-hard: the expected-context coin and the baseline's moving average") {
  Small m;
  Tape<float> tape;
  Ctx c{tape, m.ps, true, CounterRng(3, 4), 0.f};
  SatHardOptions opt;
  opt.p_expected = 1;  // every sentence soft: the value is log f at the soft context, nothing sampled
  const ObjectiveTerms soft = sat_hard_objective(c, m.head(c), log_softmax(c.p(m.scores), -1), kY, kMask, 0.f, opt);
  CHECK(soft.sampled_words == 0);
  const Var<float> lf = m.head(c).log_f_weighted(c, softmax(c.p(m.scores), -1), kY);
  CHECK(soft.objective.item() == doctest::Approx(lf.val()[0] + lf.val()[1]).epsilon(1e-6));
  CHECK(moving_baseline_update(0.5f, soft, 0.9f) == 0.5f);
  opt.p_expected = 0;
  const ObjectiveTerms hard = sat_hard_objective(c, m.head(c), log_softmax(c.p(m.scores), -1), kY, kMask, 0.f, opt);
  CHECK(hard.sampled_words == 2);
  CHECK(moving_baseline_update(0.5f, hard, 0.9f) ==
        doctest::Approx(0.9 * 0.5 + 0.1 * hard.sampled_log_lik / 2).epsilon(1e-6));
}
