// The attention variant registry (attention/variant.hpp, attention/registry.cpp): names resolve per task, unknown
// and unsupported names are usage errors, two variants cannot share a name, variants stored as another's name plus a
// flag round-trip through a model file's metadata, and a new variant is one class behind the interface (the
// example of src/README.md, run here through the generic objective and evaluation).
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"
#include "core/check.hpp"
#include "families_tiny.hpp"

namespace {

using namespace lava;
using families_test::Tiny;

// src/README.md's example: attention with a sharpened prior, w ∝ p², trained on log f(x, Σ_i w_i U_i).
class SquaredPrior : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;
  Var<float> weights(const AttentionDists& d) const override { return softmax(affine(d.log_prior, 2.f, 0.f), -1); }
  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions&) const override {
    return direct_objective(c, head, weights(d), t);
  }
};

const SquaredPrior& squared_prior() {
  static const SquaredPrior v({.name = "squared", .summary = "w = p^2 / sum p^2", .trains_likelihood = true});
  return v;
}

std::string usage_error(std::string_view name, std::string_view task) {
  try {
    attn_registry().parse(name, task);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("attention registry: an unknown name is a usage error that lists the task's variants") {
  const std::string e = usage_error("var-nope", "nmt");
  CHECK(e.find("var-nope") != std::string::npos);
  CHECK(e.find(attn_variant_list("nmt")) != std::string::npos);
  CHECK(usage_error("", "vqa") != "");
}

TEST_CASE("attention registry: two variants with one name are refused") {
  CHECK_THROWS_AS(AttnVariantRegistry({squared_prior(), squared_prior()}), std::logic_error);
  CHECK_THROWS_AS(
      AttnVariantRegistry({parse_attn_variant("soft", "nmt"), squared_prior(), parse_attn_variant("soft", "vqa")}),
      std::logic_error);
  const AttnVariantRegistry one({squared_prior(), parse_attn_variant("soft", "nmt")});
  CHECK(one.list("nmt") == "squared|soft");
  // Every variant of the registry runs in some task.
  for (AttnVariant v : attn_registry().all()) {
    CAPTURE(variant_info(v).name);
    CHECK((supports_task(v, "nmt") || supports_task(v, "vqa") || supports_task(v, "caption")));
  }
}

TEST_CASE("attention registry: a variant whose task is not supported is a usage error; lists and help are per task") {
  CHECK(usage_error("sat-hard", "nmt").find("the nmt task runs") != std::string::npos);
  CHECK(usage_error("sat-hard", "vqa") != "");
  CHECK(usage_error("var-gumbel", "caption").find("soft|sat-hard|marginal") != std::string::npos);
  CHECK(usage_error("none", "caption") != "");
  CHECK(usage_error("sat-hard", "caption") == "");
  CHECK(usage_error("bam-weibull", "vqa") == "");
  CHECK(attn_variant_list("caption") == "soft|sat-hard|marginal|hard-enum|hard-sample|var-enum|var-sample");
  CHECK(attn_variant_list("nmt") ==
        "none|soft|marginal|hard-enum|hard-sample|var-enum|var-sample|var-gumbel|var-rws|sparse-marginal|var-sparse|"
        "var-dirichlet|gauss-ctx|"
        "bam-weibull|bam-lognormal|structured|sigmoid");
  CHECK(attn_variant_list("vqa") == attn_variant_list("nmt"));
  CHECK(attn_variant_help("nmt").find("sat-hard") == std::string::npos);
  CHECK(attn_variant_help("caption").find("  sat-hard ") != std::string::npos);
  CHECK(attn_variant_list("seqvae").empty());
}

TEST_CASE("attention registry: the model file's attn entry and flags name the variant") {
  const AttnVariant sat = parse_attn_variant("sat-hard", "caption"),
                    hard = parse_attn_variant("hard-sample", "caption");
  const auto read = [](const std::map<std::string, std::string>& meta, std::string_view task) {
    return attn_registry().from_metadata(meta.at("attn"), task, [&](const char* flag) { return meta.at(flag) == "1"; });
  };
  std::map<std::string, std::string> m;
  attn_registry().to_metadata(sat, "caption", m);
  CHECK(m == std::map<std::string, std::string>{{"attn", "hard-sample"}, {"sat_hard", "1"}});
  CHECK(read(m, "caption") == sat);
  m.clear();
  attn_registry().to_metadata(hard, "caption", m);
  CHECK(m == std::map<std::string, std::string>{{"attn", "hard-sample"}, {"sat_hard", "0"}});
  CHECK(read(m, "caption") == hard);
  m.clear();
  attn_registry().to_metadata(parse_attn_variant("var-gumbel", "nmt"), "nmt", m);
  CHECK(m == std::map<std::string, std::string>{{"attn", "var-gumbel"}});
  CHECK(read(m, "nmt") == parse_attn_variant("var-gumbel", "nmt"));
  CHECK(AttnVariant() == parse_attn_variant("soft", "nmt"));
}

TEST_CASE("attention registry: a new variant is one class; the generic objective and evaluation run it") {
  Tiny t(squared_prior(), VariantConfig{}, 5);
  Tape<float> tape;
  Ctx c{tape, t.ps, true, CounterRng(1, 2), 0.f};
  Tiny::Built b = t.build(c);
  const AttnVariant v = squared_prior();
  const ObjectiveTerms o = attention_objective(c, v, b.head, b.d, Tiny::y, Tiny::mask, ObjectiveOptions{});
  double expected = 0;
  for (int n = 0; n < Tiny::N; ++n) {
    if (Tiny::mask[n] == 0) continue;
    const float* s = t.P(t.scores) + n * Tiny::S;
    families_test::Vec w(Tiny::S, 0.0);
    double z = 0;
    for (int i = 0; i < Tiny::S; ++i) z += (w[size_t(i)] = s[i] > kMaskedLogit / 2 ? std::exp(2.0 * s[i]) : 0.0);
    for (double& x : w) x /= z;
    expected += t.log_f(n, t.context(n, w));
  }
  CHECK(o.value_sum == doctest::Approx(expected).epsilon(1e-5));
  CHECK(o.objective.item() == doctest::Approx(expected).epsilon(1e-5));
  NoGrad<float> no_grad(tape);
  const AttentionEvalSums e = attention_eval_batch(c, v, b.head, b.d, Tiny::y, Tiny::mask, 0);
  CHECK(e.tokens == 3);
  CHECK(e.log_lik == doctest::Approx(expected).epsilon(1e-5));
  CHECK(likelihood_kind(v) == std::string("direct"));
  CHECK(valid_criterion(v, 2.0, -3.0) == -2.0);
}
