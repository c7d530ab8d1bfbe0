#include "attention/attention_variant.hpp"

#include "attention/objective_parts.hpp"

namespace lava {

AttentionEvalSums AttentionVariant::evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                                             const float* token_mask, int kmax) const {
  if (info_.latent) return enumerated_eval(c, *this, head, d, y, token_mask, kmax);
  return direct_eval(c, *this, head, d, weights(d), y, token_mask, kmax);
}

}  // namespace lava
