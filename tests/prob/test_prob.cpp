// The distributions of src/prob, each on its own: sample moments against their formulas, closed-form KL against Monte
// Carlo and reparameterised gradients against the exact derivatives (Weibull, Gaussian, log-normal), every op in the
// gradient-check catalogue, shape errors, and 1- vs 2-thread determinism of every sampler, KL and CRF op.
// Statistical checks allow 5 standard errors (computed from the distribution's own moments where they are known):
// the seeds are fixed, so each check is deterministic, and 5σ keeps it from depending on the seed chosen. Gamma and
// Dirichlet: tests/prob/test_prob_gamma.cpp; CRF against enumeration: tests/prob/test_prob_crf.cpp.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "autodiff/ops.hpp"
#include "prob/dirichlet.hpp"
#include "prob/gamma.hpp"
#include "prob/gaussian.hpp"
#include "prob/gradcheck_cases.hpp"
#include "prob/linear_chain_crf.hpp"
#include "prob/lognormal.hpp"
#include "prob/weibull.hpp"
#include "prob_checks.hpp"
#include "tensor/special_math.hpp"

using namespace lava;

namespace {

using namespace prob_test;

double gamma_fn(double x) { return std::exp(log_gamma(x)); }

}  // namespace

TEST_CASE("prob: Weibull samples have the Weibull moments and KL(Weibull‖Gamma) matches Monte Carlo") {
  const CounterRng rng(8, stream_id("test/weibull"));
  const double lam = 1.3;
  for (double k : {0.7, 3.0, 50.0}) {
    CAPTURE(k);
    const Samples s = draw(Shape{20000}, {lam}, [&](V l) { return weibull_sample(l.tape->full(Shape{}, k), l, rng); });
    double e[5];  // E S^r = λ^r Γ(1 + r/k)
    for (int r = 0; r <= 4; ++r) e[r] = std::pow(lam, r) * gamma_fn(1 + r / k);
    check_moments(s, e[1], e[2], e[3], e[4]);
  }
  // KL(Weibull(k, λ) ‖ Gamma(α, β)) = E_q[log q(S) − log p(S)] with
  //   log q = log k − log λ + (k−1)(log S − log λ) − (S/λ)^k,  log p = α log β − log Γ(α) + (α−1) log S − βS.
  const double k = 2, l = 1.5, al = 3, be = 2;
  Tape<double> tape;
  auto c = [&](double v) { return tape.full(Shape{}, v); };
  const double kl = kl_weibull_gamma(c(k), c(l), c(al), c(be)).item();
  const Samples s = draw(Shape{20000}, {l}, [&](V lv) { return weibull_sample(lv.tape->full(Shape{}, k), lv, rng); });
  Samples ratio(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const double ls = std::log(s[i]);
    ratio[i] = std::log(k) - std::log(l) + (k - 1) * (ls - std::log(l)) - std::pow(s[i] / l, k) -
               (al * std::log(be) - log_gamma(al) + (al - 1) * ls - be * s[i]);
  }
  const Stats mc = stats_of(ratio);
  check_estimate(mc.mean, mc.se(), kl);
}

TEST_CASE("prob: Weibull pathwise gradients of E[S] match the exact derivatives; a broadcast k sums them") {
  // E[S] = λΓ(1 + 1/k): ∂/∂k = −λΓ(1 + 1/k)ψ(1 + 1/k)/k², ∂/∂λ = Γ(1 + 1/k).
  const CounterRng rng(9, stream_id("test/weibull"));
  const int64_t n = 20000;
  const double k = 1.7, lam = 0.8, G = gamma_fn(1 + 1 / k);
  Tape<double> tape;
  std::vector<double> ks(size_t(n), k), lams(size_t(n), lam);
  V kv = tape.input(Shape{n}, ks.data(), true), lv = tape.input(Shape{n}, lams.data(), true);
  V kb = tape.input(Shape{}, &k, true);
  tape.backward(add(sum_all(weibull_sample(kv, lv, rng)), sum_all(weibull_sample(kb, lv, rng))));
  const Stats dk = stats_of(Samples(kv.grad(), kv.grad() + n));
  check_estimate(dk.mean, dk.se(), -lam * G * digamma_fn(1 + 1 / k) / (k * k));
  const Stats dl = stats_of(Samples(lv.grad(), lv.grad() + n));  // both samplers feed λ: twice the derivative
  check_estimate(dl.mean / 2, dl.se() / 2, G);
  CHECK(kb.grad()[0] == doctest::Approx(dk.mean * double(n)).epsilon(1e-12));
}

TEST_CASE("prob: Gaussian and log-normal samples have their moments, gradients and closed-form KLs") {
  const CounterRng rng(10, stream_id("test/gaussian"));
  const int64_t n = 20000;
  const double mu = -0.4, sd = 1.7;
  auto sample_with = [&](auto sampler, double m, double s) {
    return draw(Shape{n}, {m}, [&](V mv) { return sampler(mv, mv.tape->full(Shape{}, s), rng); });
  };
  const Samples z = sample_with([](V m, V s, CounterRng r) { return gaussian_sample(m, s, r); }, mu, sd);
  const double v = sd * sd;
  check_moments(z, mu, mu * mu + v, mu * mu * mu + 3 * mu * v, std::pow(mu, 4) + 6 * mu * mu * v + 3 * v * v);
  const double lm = 0.3, ls = 0.5;
  const Samples s = sample_with([](V m, V sg, CounterRng r) { return lognormal_sample(m, sg, r); }, lm, ls);
  double e[5];  // E S^r = exp(rμ + r²σ²/2)
  for (int r = 0; r <= 4; ++r) e[r] = std::exp(r * lm + r * r * ls * ls / 2);
  check_moments(s, e[1], e[2], e[3], e[4]);

  // Pathwise gradients of E[S] = exp(μ + σ²/2): ∂/∂μ = E[S], ∂/∂σ = σ E[S].
  Tape<double> tape;
  std::vector<double> ms(size_t(n), lm), ss(size_t(n), ls);
  V mv = tape.input(Shape{n}, ms.data(), true), sv = tape.input(Shape{n}, ss.data(), true);
  tape.backward(sum_all(lognormal_sample(mv, sv, rng)));
  const Stats dm = stats_of(Samples(mv.grad(), mv.grad() + n)), dsd = stats_of(Samples(sv.grad(), sv.grad() + n));
  check_estimate(dm.mean, dm.se(), e[1]);
  check_estimate(dsd.mean, dsd.se(), ls * e[1]);

  // KL(N(μq, σq²) ‖ N(μp, σp²)) against E_q[log q(z) − log p(z)]; the log-normal KL is the same number.
  const double mq = 0.5, sq = 0.7, mp = -0.3, sp = 1.2;
  auto c = [&](double x) { return tape.full(Shape{}, x); };
  const double kl = kl_gaussian(c(mq), c(sq), c(mp), c(sp)).item();
  CHECK(kl_lognormal(c(mq), c(sq), c(mp), c(sp)).item() == kl);
  CHECK(std::abs(kl_gaussian(c(mq), c(sq), c(mq), c(sq)).item()) < 1e-15);
  const Samples zq = sample_with([](V m, V sg, CounterRng r) { return gaussian_sample(m, sg, r); }, mq, sq);
  Samples ratio(zq.size());
  for (size_t i = 0; i < zq.size(); ++i) {
    const double a = (zq[i] - mq) / sq, b = (zq[i] - mp) / sp;
    ratio[i] = std::log(sp / sq) - 0.5 * a * a + 0.5 * b * b;
  }
  const Stats mc = stats_of(ratio);
  check_estimate(mc.mean, mc.se(), kl);
  // The same KL as an expectation over log-normal samples S with log-normal densities
  // log p(S) = −log S − log σ − (log S − μ)²/(2σ²) + const.
  const Samples sq_samples = sample_with([](V m, V sg, CounterRng r) { return lognormal_sample(m, sg, r); }, mq, sq);
  auto log_lognormal = [](double x, double m, double sg) {
    const double t = (std::log(x) - m) / sg;
    return -std::log(x) - std::log(sg) - 0.5 * t * t;
  };
  for (size_t i = 0; i < sq_samples.size(); ++i)
    ratio[i] = log_lognormal(sq_samples[i], mq, sq) - log_lognormal(sq_samples[i], mp, sp);
  const Stats mc_log = stats_of(ratio);
  check_estimate(mc_log.mean, mc_log.se(), kl_lognormal(c(mq), c(sq), c(mp), c(sp)).item());
}

TEST_CASE("prob: every distribution op is in the gradient-check catalogue and passes it") {
  const std::set<std::string> prob_ops = {"gamma_quantile",  "kl_dirichlet",     "weibull_sample",
                                          "kl_weibull_gamma", "gaussian_sample", "kl_gaussian",
                                          "lognormal_sample", "kl_lognormal",    "crf_log_partition",
                                          "crf_marginals"};
  std::set<std::string> seen;
  for (const GradCase& c : all_grad_cases()) {
    if (!prob_ops.count(c.op)) continue;
    const GradCheckResult r = gradcheck(c, GradCheckOptions{});
    INFO(r.op, " ", r.shape, ": max rel err ", r.max_rel_err, ", max abs err ", r.max_abs_err);
    CHECK(r.checked > 0);
    CHECK(r.pass);
    seen.insert(c.op);
  }
  CHECK(seen == prob_ops);
}

TEST_CASE("prob: shape errors are reported, not crashed on") {
  Tape<double> tape;
  V u = tape.full(Shape{2, 4, 2}, 0.5), a = tape.full(Shape{3, 4}, 1.0), b = tape.full(Shape{3}, 1.0);
  CHECK_THROWS_AS(crf_log_partition(u, tape.full(Shape{2, 4, 2, 2}, 0.0)), std::logic_error);
  CHECK_THROWS_AS(crf_marginals(u, tape.full(Shape{3, 3}, 0.0)), std::logic_error);
  const int32_t too_long[] = {4, 5};
  CHECK_THROWS_AS(crf_log_partition(u, tape.full(Shape{2, 2}, 0.0), too_long), std::logic_error);
  CHECK_THROWS_AS(kl_dirichlet(a, tape.full(Shape{4, 3}, 1.0)), std::logic_error);
  CHECK_THROWS_AS(gaussian_sample(a, b, CounterRng(1, 1)), std::logic_error);
  CHECK_THROWS_AS(kl_weibull_gamma(a, a, b, a), std::logic_error);
}

namespace {

// Forward and backward of every sampler, KL and CRF op in float at sizes above their parallel thresholds; returns
// every output value and every leaf gradient, concatenated.
std::vector<float> run_prob_ops() {
  Tape<float> tape;
  std::vector<float> out;
  auto leaf = [&](const Shape s, float lo, float hi, uint64_t stream) {  // by value: y.shape() lives in the node list
    std::vector<float> v(size_t(s.numel()));  // a golden-ratio sequence: spread out, and cheap under ASan
    for (size_t i = 0; i < v.size(); ++i) {
      const double t = double(i + 1) * 0.6180339887498949 + double(stream) * 0.1234;
      v[i] = float(lo + (hi - lo) * (t - std::floor(t)));
    }
    return tape.input(s, v.data(), true);
  };
  const CounterRng rng(15, stream_id("test/threads"));
  const int64_t n = 40000;
  Var<float> alpha = leaf(Shape{1024, 4}, 0.05f, 8.f, 1), k = leaf(Shape{}, 1.f, 3.f, 2);
  Var<float> lam = leaf(Shape{n}, 0.5f, 2.f, 3), mu = leaf(Shape{n}, -1.f, 1.f, 4), sd = leaf(Shape{n}, 0.2f, 2.f, 5);
  Var<float> b2 = leaf(Shape{1024, 4}, 0.05f, 8.f, 6), unary = leaf(Shape{64, 10, 2}, -2.f, 2.f, 7);
  Var<float> pair = leaf(Shape{2, 2}, -1.f, 1.f, 8), pairs = leaf(Shape{64, 9, 2, 2}, -1.f, 1.f, 9);
  const std::vector<int32_t> lens(64, 7);
  std::vector<Var<float>> ys = {
      dirichlet_sample(alpha, rng),        gamma_sample(alpha, rng.child(1)), kl_dirichlet(alpha, b2),
      weibull_sample(k, lam, rng),         kl_weibull_gamma(k, lam, sd, k),   gaussian_sample(mu, sd, rng),
      lognormal_sample(mu, k, rng),        kl_gaussian(mu, sd, lam, k),       crf_log_partition(unary, pair),
      crf_marginals(unary, pairs, lens.data()), crf_marginals(unary, pair)};
  Var<float> total = tape.full(Shape{}, 0.f);
  for (Var<float> y : ys) {
    total = add(total, sum_all(mul(y, leaf(y.shape(), -1.f, 1.f, 10))));
    out.insert(out.end(), y.val(), y.val() + y.numel());
  }
  tape.backward(total);
  for (Var<float> x : {alpha, k, lam, mu, sd, b2, unary, pair, pairs})
    out.insert(out.end(), x.grad(), x.grad() + x.numel());
  return out;
}

}  // namespace

TEST_CASE("prob: samples, KLs, CRF outputs and all gradients are bit-identical with 1 and 2 threads") {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<float> one = run_prob_ops();
  omp_set_num_threads(2);
  const std::vector<float> two = run_prob_ops();
  omp_set_num_threads(saved);
  REQUIRE(one.size() == two.size());
  int64_t differ = 0, non_finite = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    differ += std::memcmp(&one[i], &two[i], sizeof(float)) != 0;
    non_finite += !std::isfinite(one[i]);
  }
  CHECK(differ == 0);
  CHECK(non_finite == 0);
}
