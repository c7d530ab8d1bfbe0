#pragma once
// The interface every attention variant implements: one object per variant (or per family member), defined in its
// own file under attention/variants/ and made to exist everywhere by its line in attention/registry.cpp. A variant
// says what it supports (AttnVariantInfo, attention/variant.hpp) and computes, over a batch of B·T queries with S
// candidate positions each:
//   weights    the attention weights w (B, T, S) the head reads when no sample is drawn (evaluation without
//              enumeration, decoding, pictures); the prior p unless it overrides
//   objective  the training objective, summed over real tokens (attention/objective.hpp's ObjectiveTerms)
//   evaluate   the evaluation sums; by default the enumerated figures for a latent variant and the direct log f at
//              its weights otherwise (attention/objective_parts.hpp)
//   params     its own parameters in the model's store, and the hyperparameters its model file keeps
#include <map>
#include <string>
#include <string_view>

#include "attention/objective.hpp"

namespace lava {

class AttentionVariant {
 public:
  explicit AttentionVariant(const AttnVariantInfo& info) : info_(info) {}
  virtual ~AttentionVariant() = default;
  AttentionVariant(const AttentionVariant&) = delete;
  AttentionVariant& operator=(const AttentionVariant&) = delete;
  const AttnVariantInfo& info() const { return info_; }

  virtual Var<float> weights(const AttentionDists& d) const { return exp(d.log_prior); }
  // The latent distributions as the variant defines them, log-probabilities (B, T, S) with −∞ off a sparse support:
  // what alignments, pictures and VQA's evaluation read. By default the model's categorical p and q.
  virtual Var<float> prior_log_probs(const AttentionDists& d) const { return d.log_prior; }
  virtual Var<float> q_log_probs(const AttentionDists& d) const { return d.log_q; }

  // t.y: (B, T) labels; t.token_mask: (B, T), 1 for real tokens (t.mask: the same, on the tape).
  virtual ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d,
                                   const ObjectiveTargets& t, const ObjectiveOptions& opt) const = 0;

  // Run under NoGrad. kmax > 0: K-max test-time attention (attention/objective.hpp).
  virtual AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                                     const float* token_mask, int kmax) const;

  // Declares the variant's parameters ("attn/...") in the model's store; Hd is the head's memory width.
  virtual void declare_params(ParamStore<float>& /*ps*/, const VariantConfig& /*cfg*/, int /*Hd*/,
                              VariantParamIds& /*ids*/) const {}
  // Writes the hyperparameters the variant reads (older model files without them stay readable).
  virtual void write_config(const VariantConfig& /*cfg*/, std::map<std::string, std::string>& /*meta*/) const {}
  // For an option of info().options that the variant reads only under some values of another (the fixed prior's
  // shape, say): why cfg leaves it unread, e.g. "with --bam-prior contextual (...)"; "" when cfg reads it.
  virtual std::string option_unread(const VariantConfig& /*cfg*/, std::string_view /*option*/) const { return ""; }

 private:
  AttnVariantInfo info_;
};

}  // namespace lava
