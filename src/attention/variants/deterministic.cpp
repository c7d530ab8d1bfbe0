// The deterministic categorical attentions: f reads the expected context under the prior, and trains log f itself.
//   none   no attention: a fixed, uniform average of the memory (the fixed-vector encoder-decoder); the model has
//          no scorer (AttnVariantInfo::attends)
//   soft   log f(x, E_p[z]), soft attention; with K-max, evaluation reads the prior renormalised over its top K
#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

class ExpectedContext : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;
  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions&) const override {
    return direct_objective(c, head, exp(d.log_prior), t);
  }
};

class SoftAttention : public ExpectedContext {
 public:
  using ExpectedContext::ExpectedContext;
  AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                             const float* token_mask, int kmax) const override {
    Var<float> w = kmax > 0 ? top_k_prior(c.tape, d.log_prior, kmax) : weights(d);
    return direct_eval(c, *this, head, d, w, y, token_mask, kmax);
  }
};

}  // namespace

const AttentionVariant& no_attention() {
  static const ExpectedContext v({.name = "none",
                                  .summary = "no attention: f sees a fixed uniform average of the memory",
                                  .trains_likelihood = true,
                                  .attends = false,
                                  .kmax = false,
                                  .crosscheck = true});
  return v;
}

const AttentionVariant& soft_attention() {
  static const SoftAttention v({.name = "soft",
                                .summary = "deterministic context E_p[z]; trains log f(x, E_p[z])",
                                .tasks = "nmt vqa caption",
                                .trains_likelihood = true,
                                .crosscheck = true,
                                .paper = {.rank = 1,
                                          .model = "Soft Attention",
                                          .objective = "log p(y | E[z])",
                                          .estimator = "–",
                                          .nmt_ppl = 7.17,
                                          .nmt_bleu = 32.77,
                                          .nmt_entropy = 1.24,
                                          .vqa_nll = 1.76,
                                          .vqa_eval = 58.93,
                                          .vqa_entropy = 2.70}});
  return v;
}

}  // namespace lava
