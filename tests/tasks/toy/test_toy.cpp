// The toy's figures against an independent plain-loop computation (no autodiff ops), and its identities:
// log p − ELBO = KL(q‖posterior) at every step, ELBO ≤ log p, ELBO at q = p equals the Jensen bound.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tasks/toy/toy.hpp"

using namespace lava;

namespace {

// log f(c)_y with f(c) = softmax(W2 tanh(W1 c + b1) + b2), by plain loops in double.
double reference_log_f(const ToyParams& p, const double* c) {
  std::vector<double> h(size_t(p.H)), o(size_t(p.C));
  for (int j = 0; j < p.H; ++j) {
    double a = p.b1[size_t(j)];
    for (int d = 0; d < p.D; ++d) a += p.W1[size_t(j * p.D + d)] * c[d];
    h[size_t(j)] = std::tanh(a);
  }
  double m = -INFINITY;
  for (int k = 0; k < p.C; ++k) {
    double a = p.b2[size_t(k)];
    for (int j = 0; j < p.H; ++j) a += p.W2[size_t(k * p.H + j)] * h[size_t(j)];
    o[size_t(k)] = a;
    m = std::max(m, a);
  }
  double s = 0;
  for (double a : o) s += std::exp(a - m);
  return o[size_t(p.label)] - m - std::log(s);
}

struct Reference {
  std::vector<double> prior, loglik, posterior;
  double log_p_soft, log_p_exact, jensen;
};

Reference reference(const ToyParams& p) {
  Reference r;
  double m = -INFINITY, s = 0;
  for (double v : p.scores) m = std::max(m, v);
  for (double v : p.scores) s += std::exp(v - m);
  for (double v : p.scores) r.prior.push_back(std::exp(v - m) / s);
  std::vector<double> ctx(size_t(p.D), 0.0);
  double marginal = 0;
  r.jensen = 0;
  for (int i = 0; i < p.K; ++i) {
    const double* x = &p.features[size_t(i * p.D)];
    for (int d = 0; d < p.D; ++d) ctx[size_t(d)] += r.prior[size_t(i)] * x[d];
    r.loglik.push_back(reference_log_f(p, x));
    marginal += r.prior[size_t(i)] * std::exp(r.loglik.back());
    r.jensen += r.prior[size_t(i)] * r.loglik.back();
  }
  r.log_p_soft = reference_log_f(p, ctx.data());
  r.log_p_exact = std::log(marginal);
  for (int i = 0; i < p.K; ++i) r.posterior.push_back(r.prior[size_t(i)] * std::exp(r.loglik[size_t(i)]) / marginal);
  return r;
}

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max({std::abs(a), std::abs(b), 1e-300}); }

}  // namespace

TEST_CASE("toy: every figure agrees with an independent computation to 1e-6 relative, K = 2..50") {
  for (int K : {2, 3, 7, 20, 50}) {
    ToyParams p = toy_params_random(100 + uint64_t(K), K, 5, 12, 6);
    ToyOptions opt;
    opt.steps = 300;
    ToyResult r = run_toy(p, opt);
    Reference ref = reference(p);
    CAPTURE(K);
    CHECK(close(r.log_p_soft, ref.log_p_soft, 1e-6));
    CHECK(close(r.log_p_exact, ref.log_p_exact, 1e-6));
    CHECK(close(r.jensen, ref.jensen, 1e-6));
    for (int i = 0; i < K; ++i) {
      CHECK(close(r.prior[size_t(i)], ref.prior[size_t(i)], 1e-6));
      CHECK(close(std::log(r.likelihood[size_t(i)]), ref.loglik[size_t(i)], 1e-6));
      CHECK(close(r.posterior[size_t(i)], ref.posterior[size_t(i)], 1e-6));
    }
    // ELBO and both KLs recomputed from the reported q.
    double e = 0, kl_p = 0, kl_post = 0, qsum = 0;
    for (int i = 0; i < K; ++i) {
      const double q = r.q[size_t(i)];
      qsum += q;
      e += q * (ref.loglik[size_t(i)] + std::log(ref.prior[size_t(i)]) - std::log(q));
      kl_p += q * std::log(q / ref.prior[size_t(i)]);
      kl_post += q * std::log(q / ref.posterior[size_t(i)]);
    }
    CHECK(close(qsum, 1.0, 1e-12));
    CHECK(close(r.elbo, e, 1e-6));
    CHECK(close(r.kl_q_prior, kl_p, 1e-6));
    CHECK(std::abs(r.kl_q_posterior - kl_post) <= 1e-9);
    CHECK(std::abs(r.kl_gap - (ref.log_p_exact - e)) <= 1e-9);
  }
}

TEST_CASE("toy: identities hold at every step, and the defaults close the gap") {
  ToyParams p = toy_params_random(1, 8, 4, 16, 5);
  ToyResult r = run_toy(p, ToyOptions{});
  REQUIRE(r.trace.size() == size_t(ToyOptions{}.steps + 1));
  int violations = 0;
  for (const ToyTracePoint& t : r.trace) {
    violations += std::abs(t.kl_gap - t.kl_q_posterior) > 1e-9;  // log p − ELBO = KL(q‖π)
    violations += t.elbo > r.log_p_exact + 1e-12;                  // ELBO ≤ log p
  }
  CHECK(violations == 0);
  CHECK(r.max_identity_error < 1e-9);
  CHECK(r.kl_gap < 1e-4);
  CHECK(r.kl_gap > -1e-12);
  CHECK(r.trace.back().elbo > r.trace.front().elbo);
  CHECK(r.scalar_f_of_mean == 1.0);
  CHECK(r.scalar_mean_of_f == 2.0);
}

TEST_CASE("toy: the ELBO at q = p is the Jensen bound") {
  ToyParams p = toy_params_random(9, 6, 3, 8, 4);
  ToyOptions opt;
  opt.steps = 0;
  opt.init_lambda = p.scores;  // softmax(scores) = p
  ToyResult r = run_toy(p, opt);
  CHECK(std::abs(r.elbo - r.jensen) < 1e-12);
  CHECK(std::abs(r.kl_q_prior) < 1e-12);
  CHECK(r.jensen <= r.log_p_exact);
}
