// K-max evaluation (attention_eval with kmax > 0) against a hand computation in double: the prior renormalised over
// its top K, the exact marginal under it, and, where q keeps mass on a position K-max cuts, an ELBO of −∞ and KLs of
// +∞ (log p_K = −∞ there) with q's mass on the cut positions reported beside them, never a large finite stand-in;
// the identity error over the tokens with a finite ELBO, NaN when there is none.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attention/objective.hpp"
#include "attention/variant.hpp"

using namespace lava;

namespace {

std::vector<float> logs(std::initializer_list<double> xs) {
  std::vector<float> out;
  for (double x : xs) out.push_back(float(std::log(x)));
  return out;
}

}  // namespace

TEST_CASE("kmax eval: q's mass on a cut position makes ELBO -inf and the KLs +inf, and is reported") {
  // One token, three positions. Prior (.5, .3, .2): K = 2 keeps positions 0 and 1, p_K = (.625, .375, 0).
  const std::vector<float> log_prior = logs({.5, .3, .2}), log_f = logs({.1, .4, .7}), mask = {1.f};
  const AttnVariant var_enum = parse_attn_variant("var-enum", "nmt");
  const double log_lik_k2 = std::log(.625 * .1 + .375 * .4);

  SUBCASE("q puts .5 on the cut position") {
    const std::vector<float> log_q = logs({.2, .3, .5});
    const AttentionEvalSums r =
        attention_eval(var_enum, log_prior.data(), log_q.data(), log_f.data(), nullptr, mask.data(), 1, 3, 2);
    CHECK(r.log_lik == doctest::Approx(log_lik_k2).epsilon(1e-6));
    CHECK(std::isinf(r.elbo));
    CHECK(r.elbo < 0);
    CHECK(std::isinf(r.kl));
    CHECK(r.kl > 0);
    CHECK(std::isinf(r.kl_posterior));
    CHECK(r.q_mass_cut == doctest::Approx(.5).epsilon(1e-6));
    CHECK(r.infinite_elbo_tokens == 1);
    CHECK(std::isnan(r.identity_error()));  // no finite token to measure the identity on: not a 0
  }
  SUBCASE("q inside the top K: every figure finite, and log p − ELBO = KL(q ‖ posterior)") {
    const std::vector<float> log_q = {float(std::log(.4)), float(std::log(.6)), -INFINITY};
    const AttentionEvalSums r =
        attention_eval(var_enum, log_prior.data(), log_q.data(), log_f.data(), nullptr, mask.data(), 1, 3, 2);
    const double elbo = .4 * (std::log(.1) + std::log(.625) - std::log(.4)) +
                        .6 * (std::log(.4) + std::log(.375) - std::log(.6));
    CHECK(r.elbo == doctest::Approx(elbo).epsilon(1e-6));
    CHECK(r.kl == doctest::Approx(.4 * std::log(.4 / .625) + .6 * std::log(.6 / .375)).epsilon(1e-6));
    CHECK(r.kl_posterior == doctest::Approx(log_lik_k2 - elbo).epsilon(1e-6));
    CHECK(r.q_mass_cut == 0);
    CHECK(r.infinite_elbo_tokens == 0);
    CHECK(r.identity_error() < 1e-12);
  }
  SUBCASE("two tokens, one cut: the identity error is the finite token's, and the sums add") {
    const std::vector<float> log_q2 = {float(std::log(.4)), float(std::log(.6)), -INFINITY,
                                       float(std::log(.2)), float(std::log(.3)), float(std::log(.5))};
    std::vector<float> prior2 = log_prior, f2 = log_f;
    prior2.insert(prior2.end(), log_prior.begin(), log_prior.end());
    f2.insert(f2.end(), log_f.begin(), log_f.end());
    const std::vector<float> mask2 = {1.f, 1.f};
    AttentionEvalSums r =
        attention_eval(var_enum, prior2.data(), log_q2.data(), f2.data(), nullptr, mask2.data(), 2, 3, 2);
    CHECK(r.infinite_elbo_tokens == 1);
    CHECK(r.identity_error() < 1e-12);
    r.add(r);
    CHECK(r.tokens == 4);
    CHECK(r.infinite_elbo_tokens == 2);
    CHECK(r.identity_error() < 1e-12);
  }
  SUBCASE("the exact evaluation (K = 0) cuts nothing") {
    const std::vector<float> log_q = logs({.2, .3, .5});
    const AttentionEvalSums r =
        attention_eval(var_enum, log_prior.data(), log_q.data(), log_f.data(), nullptr, mask.data(), 1, 3, 0);
    CHECK(std::isfinite(r.elbo));
    CHECK(r.q_mass_cut == 0);
    CHECK(r.log_lik == doctest::Approx(std::log(.5 * .1 + .3 * .4 + .2 * .7)).epsilon(1e-6));
  }
}
