// Each attention variant declares the variant options it reads (AttnVariantInfo::options), and `lava train` refuses
// the others (tests/cli/test_variant_options.cpp). Here the declarations are held to what the code does, on the
// tiny problem of tests/attention/families_tiny.hpp: for every variant and every option, setting the option to
// another value changes something the variant computes (its training objective and gradient, the moving baseline's
// update, its weights, its evaluation sums or its parameters) exactly when the variant declares it and its other
// options do not leave it unread (AttentionVariant::option_unread); otherwise every one of them stays the same to the
// bit. Its model file's keys change only with an option it declares (a file records the Weibull prior's fixed shape
// whichever prior it has).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attention/attention_weights.hpp"
#include "cli/variant_options.hpp"
#include "families_tiny.hpp"

using namespace lava;
using families_test::Tiny;

namespace {

// Everything variant v computes from one configuration, floating-point figures as their bits (NaN equals itself).
struct Computed {
  std::vector<uint64_t> bits;
  std::map<std::string, std::string> meta;
  std::vector<std::string> params;
  bool same_computation(const Computed& o) const { return bits == o.bits && params == o.params; }
};

Computed compute(AttnVariant v, const VariantConfig& cfg, const ObjectiveOptions& opt) {
  Computed r;
  const auto add = [&](double x) { r.bits.push_back(std::bit_cast<uint64_t>(x)); };
  Tiny t(v, cfg, 5);
  {  // a training step: the objective, its sums and gradient, and the moving baseline's next value
    Tape<float> tape;
    t.ps.zero_grad();
    Ctx c{tape, t.ps, true, CounterRng(3, 4), 0.f};
    Tiny::Built b = t.build(c);
    const ObjectiveTerms o = attention_objective(c, v, b.head, b.d, Tiny::y, Tiny::mask, opt);
    tape.backward(o.objective);
    for (double x : {double(o.objective.item()), o.value_sum, o.kl_sum, o.q_entropy_sum, o.prior_entropy_sum,
                     o.sampled_words, o.sampled_log_lik, o.support_sum})
      add(x);
    for (size_t i = 0; i < t.ps.size(); ++i) add(t.ps.grads()[i]);
    if (variant_info(v).moving_baseline) add(moving_baseline_update(0.25f, o, opt.sat.baseline_decay));
  }
  {  // the weights f reads without a draw, and the evaluation sums
    Tape<float> tape;
    Ctx c{tape, t.ps, false, CounterRng(7, 11), 0.f};
    NoGrad<float> no_grad(tape);
    Tiny::Built b = t.build(c);
    const Var<float> w = attention_weights(v, b.d);
    for (int64_t i = 0; i < w.numel(); ++i) add(w.val()[i]);
    const AttentionEvalSums e = attention_eval_batch(c, v, b.head, b.d, Tiny::y, Tiny::mask, 0);
    for (double x : {e.tokens, e.log_lik, e.elbo, e.kl, e.kl_posterior, e.entropy, e.q_entropy, e.mean_attn_log_lik,
                     e.support})
      add(x);
  }
  cfg.to_metadata(v, r.meta);
  for (const auto& p : t.ps.params()) r.params.push_back(p.name);
  return r;
}

// An option: what it sets to a value other than its default, and what else must hold for a variant to read it.
struct OptionCase {
  const char* name;
  std::function<void(VariantConfig&, ObjectiveOptions&)> change;
  std::function<void(VariantConfig&, ObjectiveOptions&)> base = [](VariantConfig&, ObjectiveOptions&) {};
};

const std::vector<OptionCase>& option_cases() {
  using C = VariantConfig;
  using O = ObjectiveOptions;
  static const std::vector<OptionCase> cases = {
      {"samples", [](C&, O& o) { o.samples = 2; }},
      {"temperature", [](C&, O& o) { o.temperature = 0.5f; }},
      {"warm-start", [](C&, O& o) { o.warm_start = 1; }},  // the step is 0: inside the warm start
      {"att-kl", [](C&, O& o) { o.att_kl = 0.5f; }},
      {"att-kl-anneal", [](C&, O& o) { o.kl_anneal = 10; }},
      {"crf-l2", [](C&, O& o) { o.crf_l2 = 0.05f; }},
      {"eval-samples", [](C& c, O&) { c.eval_samples = 3; }},
      {"k-weibull", [](C& c, O&) { c.k_weibull = 5; }},
      // The shape of the fixed Gamma prior, read with it only: the contextual prior's shape is β π instead.
      {"alpha-gamma", [](C& c, O&) { c.alpha_gamma = 2; }, [](C& c, O&) { c.bam_prior = "fixed"; }},
      {"alpha-gamma", [](C& c, O&) { c.alpha_gamma = 2; }, [](C& c, O&) { c.bam_prior = "contextual"; }},
      {"beta-gamma", [](C& c, O&) { c.beta_gamma = 3; }},
      {"sigma-q", [](C& c, O&) { c.sigma_q = 0.3f; }},
      {"sigma-p", [](C& c, O&) { c.sigma_p = 2; }},
      {"crf-lambda", [](C& c, O&) { c.crf_lambda = 1.5f; }},
      {"alpha", [](C& c, O&) { c.sparse_alpha = 1.5f; }},
      {"alpha-transform", [](C& c, O&) { c.alpha_transform = "softplus"; }},
      {"gauss-prior", [](C& c, O&) { c.gauss_prior = "zero"; }},
      {"bam-prior", [](C& c, O&) { c.bam_prior = "fixed"; }},
      {"sat-reinforce", [](C&, O& o) { o.sat.reinforce = 0.5f; }},
      {"sat-entropy", [](C&, O& o) { o.sat.entropy = 0.1f; }},
      // Every sentence on the expected context, against none (two coins could both fall on one side of 0.5).
      {"sat-expected", [](C&, O& o) { o.sat.p_expected = 1; }, [](C&, O& o) { o.sat.p_expected = 0; }},
      {"sat-baseline-decay", [](C&, O& o) { o.sat.baseline_decay = 0.5f; }},
  };
  return cases;
}

}  // namespace

TEST_CASE("variant options: the cases cover every variant option and every option a variant declares") {
  std::set<std::string> names;
  for (const OptionCase& k : option_cases()) names.insert(k.name);
  std::set<std::string> expected = {"sat-reinforce", "sat-entropy", "sat-expected", "sat-baseline-decay"};
  for (const std::string& name : variant_option_names()) expected.insert(name);
  CHECK(names == expected);
  for (AttnVariant v : attn_registry().all())
    for (const std::string& name : options_read(v)) {
      const std::string variant = variant_info(v).name;
      CAPTURE(variant);
      CAPTURE(name);
      CHECK(names.count(name) == 1);
    }
}

TEST_CASE("variant options: a variant's computation depends on an option exactly when the variant reads it") {
  for (AttnVariant v : attn_registry().all()) {
    for (const OptionCase& k : option_cases()) {
      VariantConfig cfg;
      ObjectiveOptions opt;
      k.base(cfg, opt);
      const Computed base = compute(v, cfg, opt);
      const Computed again = compute(v, cfg, opt);
      CHECK((again.same_computation(base) && again.meta == base.meta));  // so a difference below is the option's
      const std::string unread = v->option_unread(cfg, k.name);
      CHECK((unread.empty() || reads_option(v, k.name)));  // a reason only for an option it declares
      k.change(cfg, opt);
      const Computed other = compute(v, cfg, opt);
      const bool declared = reads_option(v, k.name), changed = !other.same_computation(base);
      const std::string variant = variant_info(v).name, option = k.name;
      CAPTURE(variant);
      CAPTURE(option);
      CAPTURE(declared);
      CAPTURE(unread);
      CHECK(changed == (declared && unread.empty()));
      if (!declared) CHECK(other.meta == base.meta);
    }
  }
}
