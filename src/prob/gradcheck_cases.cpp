// Gradient-check cases for the distribution ops of src/prob, appended to autodiff's op cases by all_grad_cases().
// Positive parameters are drawn from positive ranges; broadcast operands (a scalar k, β or σ) are included.
// Not here: gamma_log_sample, gamma_sample and dirichlet_sample, whose implicit gradient is the derivative at fixed
// CDF value u, not at fixed Marsaglia–Tsang noise, so finite differences of their forward do not match it sample by
// sample. gamma_quantile shares their gradient kernel and is checked here; tests/prob/test_prob_gamma.cpp checks the
// samplers against derivatives of the quantile at each sample's own u and against finite differences of expectations.
#include <vector>

#include "prob/gradcheck_cases.hpp"

#include "autodiff/gradcheck.hpp"
#include "prob/dirichlet.hpp"
#include "prob/gamma.hpp"
#include "prob/gaussian.hpp"
#include "prob/linear_chain_crf.hpp"
#include "prob/lognormal.hpp"
#include "prob/weibull.hpp"

namespace lava {

namespace {
using V = Var<double>;
using Vs = std::vector<V>;

GradCase make_case(std::string op, std::vector<Shape> in, double lo, double hi, std::string note,
                   std::function<V(const Vs&)> f) {
  GradCase c;
  c.op = std::move(op);
  for (size_t i = 0; i < in.size(); ++i) c.shape += (i ? ", " : "") + in[i].str();
  c.shape += note;
  c.inputs = std::move(in);
  c.lo = lo, c.hi = hi;
  c.build = [f](const Vs& x) { return Vs{f(x)}; };
  return c;
}

// A constant (no gradient) on the same tape as x.
V constant(const V& x, const Shape& s, const std::vector<double>& data) { return x.tape->input(s, data.data()); }

void add_gamma(std::vector<GradCase>& cs) {
  const std::vector<double> u7 = {0.03, 0.2, 0.45, 0.5, 0.71, 0.9, 0.97};
  cs.push_back(make_case("gamma_quantile", {{7}}, 0.3, 6, ", u fixed", [u7](const Vs& x) {
    return gamma_quantile(x[0], constant(x[0], Shape{7}, u7));
  }));
  cs.push_back(make_case("gamma_quantile", {{5}}, 20, 80, ", u fixed (large α)", [u7](const Vs& x) {
    return gamma_quantile(x[0], constant(x[0], Shape{5}, {u7.begin(), u7.begin() + 5}));
  }));
  cs.push_back(make_case("gamma_quantile", {{2, 3}, {2, 3}}, 0.15, 0.9, " (small α, gradient in u)",
                         [](const Vs& x) { return gamma_quantile(x[0], x[1]); }));
  cs.push_back(make_case("gamma_quantile", {{}}, 0.5, 4, ", u (2,4) fixed (broadcast α)", [u7](const Vs& x) {
    return gamma_quantile(x[0], constant(x[0], Shape{2, 4}, {0.1, 0.3, 0.5, 0.7, 0.9, 0.6, 0.4, 0.2}));
  }));
}

void add_dirichlet_weibull(std::vector<GradCase>& cs) {
  cs.push_back(make_case("kl_dirichlet", {{3, 4}, {3, 4}}, 0.2, 4, "",
                         [](const Vs& x) { return kl_dirichlet(x[0], x[1]); }));
  cs.push_back(make_case("kl_dirichlet", {{2, 1, 6}, {2, 1, 6}}, 0.05, 2, "",
                         [](const Vs& x) { return kl_dirichlet(x[0], x[1]); }));
  const CounterRng rng(11, stream_id("gradcheck/prob"));
  cs.push_back(make_case("weibull_sample", {{}, {3, 4}}, 0.5, 3, "",
                         [rng](const Vs& x) { return weibull_sample(x[0], x[1], rng); }));
  cs.push_back(make_case("weibull_sample", {{3, 4}, {4}}, 0.5, 3, "",
                         [rng](const Vs& x) { return weibull_sample(x[0], x[1], rng); }));
  cs.push_back(make_case("kl_weibull_gamma", {{}, {2, 5}, {2, 5}, {}}, 0.5, 3, "",
                         [](const Vs& x) { return kl_weibull_gamma(x[0], x[1], x[2], x[3]); }));
  cs.push_back(make_case("kl_weibull_gamma", {{6}, {6}, {6}, {6}}, 0.3, 3, "",
                         [](const Vs& x) { return kl_weibull_gamma(x[0], x[1], x[2], x[3]); }));
}

void add_gaussian(std::vector<GradCase>& cs) {
  const CounterRng rng(12, stream_id("gradcheck/prob"));
  cs.push_back(make_case("gaussian_sample", {{3, 4}, {4}}, 0.2, 2, "",
                         [rng](const Vs& x) { return gaussian_sample(x[0], x[1], rng); }));
  cs.push_back(make_case("gaussian_sample", {{}, {2, 3}}, 0.2, 2, "",
                         [rng](const Vs& x) { return gaussian_sample(x[0], x[1], rng); }));
  cs.push_back(make_case("kl_gaussian", {{2, 3}, {2, 3}, {3}, {}}, 0.3, 2, "",
                         [](const Vs& x) { return kl_gaussian(x[0], x[1], x[2], x[3]); }));
  cs.push_back(make_case("kl_gaussian", {{5}, {5}, {5}, {5}}, 0.3, 2, "",
                         [](const Vs& x) { return kl_gaussian(x[0], x[1], x[2], x[3]); }));
  cs.push_back(make_case("lognormal_sample", {{3, 4}, {3, 4}}, 0.1, 1, "",
                         [rng](const Vs& x) { return lognormal_sample(x[0], x[1], rng); }));
  cs.push_back(make_case("kl_lognormal", {{4}, {4}, {4}, {4}}, 0.3, 2, "",
                         [](const Vs& x) { return kl_lognormal(x[0], x[1], x[2], x[3]); }));
}

void add_crf(std::vector<GradCase>& cs) {
  struct Crf {
    Shape unary, pairwise;
    std::vector<int32_t> lengths;  // empty: every row has length N
    std::string note;
  };
  const Crf crfs[] = {
      {{2, 5, 2}, {2, 2}, {}, ", shared θ"},
      {{3, 4, 2}, {3, 3, 2, 2}, {4, 2, 1}, ", lengths 4,2,1"},
      {{2, 3, 3}, {3, 3}, {3, 0}, ", K=3, shared θ, lengths 3,0"},
  };
  for (const Crf& k : crfs) {
    const std::vector<int32_t> lens = k.lengths;
    auto len = [lens] { return lens.empty() ? nullptr : lens.data(); };
    cs.push_back(make_case("crf_log_partition", {k.unary, k.pairwise}, -1.5, 1.5, k.note,
                           [len](const Vs& x) { return crf_log_partition(x[0], x[1], len()); }));
    cs.push_back(make_case("crf_marginals", {k.unary, k.pairwise}, -1.5, 1.5, k.note,
                           [len](const Vs& x) { return crf_marginals(x[0], x[1], len()); }));
  }
}
}  // namespace

std::vector<GradCase> all_grad_cases() {
  std::vector<GradCase> cs = op_grad_cases();
  add_gamma(cs);
  add_dirichlet_weibull(cs);
  add_gaussian(cs);
  add_crf(cs);
  return cs;
}

}  // namespace lava
