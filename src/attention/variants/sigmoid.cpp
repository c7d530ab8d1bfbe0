// Independent gates, `sigmoid` (structured attention's baseline in Kim et al. 2017): f reads the context
// Σ_i sigmoid(s_i) U_i (unnormalised; padding gets sigmoid(kMaskedLogit) = 0) and trains log f itself. The weights
// do not sum to 1, so K-max does not apply.
#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

class SigmoidGates : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  Var<float> weights(const AttentionDists& d) const override { return sigmoid(d.scores); }

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions&) const override {
    return direct_objective(c, head, weights(d), t);
  }
};

}  // namespace

const AttentionVariant& sigmoid_attention() {
  static const SigmoidGates v({.name = "sigmoid",
                               .summary = "independent gates: context sum_i sigmoid(s_i) x_i (structured's baseline)",
                               .trains_likelihood = true,
                               .kmax = false,
                               .decodes_prior = false,
                               .weights_normalised = false});
  return v;
}

}  // namespace lava
