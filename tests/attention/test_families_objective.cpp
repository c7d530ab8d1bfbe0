// The training objectives of the wider family of attention variants (attention/variant.hpp) on the tiny problem of
// tests/attention/families_tiny.hpp: the categorical warm start's gradients against their values in double (and
// var-dirichlet's Jensen bound against tests/attention/families_reference.hpp), the KL weight of gauss-ctx and bam-*
// under --att-kl and the ramp, and a training step's bits with 1 and 2 threads. (Sampled evaluation:
// test_families.cpp.)
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "attention/variants/continuous.hpp"
#include "families_reference.hpp"
#include "families_tiny.hpp"

using namespace lava;
using families_test::log_mean_exp;
using families_test::Reference;
using families_test::reference;
using families_test::Tiny;
using families_test::Vec;

namespace {

struct Step {
  double objective, value, kl;
  Vec grad;  // every parameter, in ParamStore order
};

// attention_objective of variant v at update `step` on t, and the gradient of its objective.
Step run_objective(Tiny& t, AttnVariant v, const ObjectiveOptions& opt, uint64_t seed = 3) {
  Tape<float> tape;
  t.ps.zero_grad();
  Ctx c{tape, t.ps, true, CounterRng(seed, 4), 0.f};
  Tiny::Built b = t.build(c);
  const ObjectiveTerms o = attention_objective(c, v, b.head, b.d, Tiny::y, Tiny::mask, opt);
  tape.backward(o.objective);
  return {o.objective.item(), o.value_sum, o.kl_sum, Vec(t.ps.grads(), t.ps.grads() + t.ps.size())};
}

size_t offset(const Tiny& t, int id) { return t.ps.params()[size_t(id)].offset; }

}  // namespace

TEST_CASE("families: warm start trains p, f on the exact marginal and q on -KL(q || posterior), then the ELBO") {
  Tiny t(parse_attn_variant("var-enum", "nmt"), VariantConfig{}, 8);
  ObjectiveOptions opt;
  opt.warm_start = 3, opt.step = 0;
  const Step warm = run_objective(t, parse_attn_variant("var-enum", "nmt"), opt),
             marg = run_objective(t, parse_attn_variant("marginal", "nmt"), opt);
  opt.step = 3;
  const Step after = run_objective(t, parse_attn_variant("var-enum", "nmt"), opt);
  // In double: the exact posterior π ∝ p f, the ELBO and KL(q ‖ p) per real token, and the gradients
  //   warm:  ∂/∂s_j = π_j − p_j        after: ∂/∂s_j = q_j − p_j        both: ∂/∂u_j = q_j (log p_j f_j − log q_j − ELBO)
  Vec g_warm(Tiny::N * Tiny::S, 0.0), g_after(g_warm), g_q(g_warm);
  double elbo = 0, kl = 0;
  for (int n = 0; n < Tiny::N; ++n) {
    if (Tiny::mask[n] == 0) continue;
    const Vec p = t.softmax_row(t.scores, n), q = t.softmax_row(t.q_scores, n);
    const int L = Tiny::len[n / Tiny::T];
    Vec joint(static_cast<size_t>(L));
    double e = 0;
    for (int s = 0; s < L; ++s) {
      joint[size_t(s)] = std::log(p[size_t(s)]) + t.log_f_at(n, s);
      e += q[size_t(s)] * (joint[size_t(s)] - std::log(q[size_t(s)]));
      kl += q[size_t(s)] * (std::log(q[size_t(s)]) - std::log(p[size_t(s)]));
    }
    const double log_marginal = log_mean_exp(joint) + std::log(double(L));
    elbo += e;
    for (int s = 0; s < L; ++s) {
      g_warm[size_t(n * Tiny::S + s)] = std::exp(joint[size_t(s)] - log_marginal) - p[size_t(s)];
      g_after[size_t(n * Tiny::S + s)] = q[size_t(s)] - p[size_t(s)];
      g_q[size_t(n * Tiny::S + s)] = q[size_t(s)] * (joint[size_t(s)] - std::log(q[size_t(s)]) - e);
    }
  }
  const size_t so = offset(t, t.scores), qo = offset(t, t.q_scores), ns = size_t(Tiny::N * Tiny::S);
  for (size_t k = 0; k < ns; ++k) {
    CHECK(warm.grad[so + k] == doctest::Approx(g_warm[k]).epsilon(1e-4).scale(1e-3));
    CHECK(after.grad[so + k] == doctest::Approx(g_after[k]).epsilon(1e-4).scale(1e-3));
    CHECK(warm.grad[qo + k] == doctest::Approx(g_q[k]).epsilon(1e-4).scale(1e-3));
    CHECK(after.grad[qo + k] == doctest::Approx(g_q[k]).epsilon(1e-4).scale(1e-3));
  }
  for (size_t i = 0; i < warm.grad.size(); ++i)  // p and f: exactly the marginal's gradient
    if (i < qo || i >= qo + ns) CHECK(warm.grad[i] == doctest::Approx(marg.grad[i]).epsilon(1e-5).scale(1e-5));
  CHECK(warm.value == doctest::Approx(elbo).epsilon(1e-5));  // reported: the ELBO throughout
  CHECK(warm.kl == doctest::Approx(kl).epsilon(1e-5));
  CHECK(after.objective == doctest::Approx(elbo).epsilon(1e-5));
  CHECK(after.value == doctest::Approx(elbo).epsilon(1e-5));
  // Every categorical q variant shares the warm start (its objective does not depend on the estimator).
  opt.step = 0;
  for (AttnVariant v : {parse_attn_variant("var-sample", "nmt"), parse_attn_variant("var-gumbel", "nmt"),
                        parse_attn_variant("var-rws", "nmt")}) {
    const Step other = run_objective(t, v, opt);
    for (size_t i = 0; i < warm.grad.size(); ++i) CHECK(other.grad[i] == doctest::Approx(warm.grad[i]).epsilon(1e-6));
  }

  // var-dirichlet: the Jensen bound E_{Dir(α_p)} log f with z from the prior; q gets no gradient and no KL.
  Tiny d(parse_attn_variant("var-dirichlet", "nmt"), VariantConfig{}, 8);
  constexpr int D = 200, Kref = 5000;
  const Reference ref = reference(d, parse_attn_variant("var-dirichlet", "nmt"), Kref, 9);
  double mean = 0, mean2 = 0;
  for (int k = 0; k < D; ++k) {
    const Step s = run_objective(d, parse_attn_variant("var-dirichlet", "nmt"), opt, 50 + uint64_t(k));
    CHECK(s.kl == 0);
    if (k == 0)
      for (size_t i = offset(d, d.q_scores); i < offset(d, d.q_scores) + ns; ++i) CHECK(s.grad[i] == 0);
    mean += s.value / D, mean2 += s.value * s.value / D;
  }
  CHECK(std::abs(mean - ref.jensen_prior) < 4 * std::sqrt((mean2 - mean * mean) * (1.0 / D + 1.0 / Kref)) + 1e-3);
  opt.step = 3;
  const Step s = run_objective(d, parse_attn_variant("var-dirichlet", "nmt"), opt);
  double q_norm = 0;
  for (size_t i = offset(d, d.q_scores); i < offset(d, d.q_scores) + ns; ++i) q_norm += std::abs(s.grad[i]);
  CHECK(q_norm > 1e-3);
  CHECK(s.kl == doctest::Approx(ref.kl).epsilon(1e-4));
}

TEST_CASE("families: gauss-ctx and bam-* report the ELBO with KL weight 1; the weight follows --att-kl and the ramp") {
  for (AttnVariant v : {parse_attn_variant("gauss-ctx", "nmt"), parse_attn_variant("bam-weibull", "nmt"),
                        parse_attn_variant("bam-lognormal", "nmt"), parse_attn_variant("var-dirichlet", "nmt")}) {
    CAPTURE(variant_info(v).name);
    Tiny t(v, VariantConfig{}, 13);
    ObjectiveOptions opt;
    const Step base = run_objective(t, v, opt);
    CHECK(base.kl > 0);
    for (float att_kl : {-1.f, 0.f, 0.3f, 2.f}) {
      for (int64_t step : {int64_t(0), int64_t(4500), int64_t(5500)}) {
        opt.att_kl = att_kl, opt.kl_anneal = 4500, opt.step = step;
        const double w0 = att_kl >= 0 ? att_kl : v == parse_attn_variant("gauss-ctx", "nmt") ? 0.1 : 1.0;
        const double w = w0 * (std::tanh((double(step) - 4500) / 1000) + 1) / 2;  // Bahuleyan et al.'s ramp
        CAPTURE(att_kl);
        CAPTURE(step);
        const double used = v == parse_attn_variant("var-dirichlet", "nmt") ? 1.0 : w;  // Dirichlet: always the ELBO
        CHECK(continuous_kl_weight(v, opt) == doctest::Approx(used).epsilon(1e-6));
        const Step s = run_objective(t, v, opt);
        CHECK(s.value == base.value);  // the same draw: value and KL do not depend on the weight
        CHECK(s.kl == base.kl);
        CHECK(s.objective == doctest::Approx(s.value + (1 - used) * s.kl).epsilon(1e-5));
      }
    }
    opt.kl_anneal = 0, opt.att_kl = 0.3f;
    CHECK(continuous_kl_weight(v, opt) == (v == parse_attn_variant("var-dirichlet", "nmt") ? 1.f : 0.3f));
  }
}

TEST_CASE("families: a training step's objective and gradients are identical with 1 and 2 threads") {
  const int saved = omp_get_max_threads();
  for (AttnVariant v : {parse_attn_variant("var-dirichlet", "nmt"), parse_attn_variant("gauss-ctx", "nmt"),
                        parse_attn_variant("bam-weibull", "nmt"), parse_attn_variant("bam-lognormal", "nmt"),
                        parse_attn_variant("structured", "nmt"), parse_attn_variant("sigmoid", "nmt")}) {
    CAPTURE(variant_info(v).name);
    Tiny t(v, VariantConfig{}, 17);
    omp_set_num_threads(1);
    const Step one = run_objective(t, v, ObjectiveOptions{});
    omp_set_num_threads(2);
    const Step two = run_objective(t, v, ObjectiveOptions{});
    CHECK(one.objective == two.objective);
    CHECK(one.grad == two.grad);
    double norm = 0;
    for (double g : two.grad) norm += std::abs(g);
    CHECK(norm > 0);
  }
  omp_set_num_threads(saved);
}
