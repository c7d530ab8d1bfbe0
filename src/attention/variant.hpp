#pragma once
// The attention variants, shared by every task (translation, VQA). Paper Table 1 naming → `--attn` word:
//   none         no attention: a fixed, uniform average of the memory (the fixed-vector encoder-decoder)
//   soft         log f(x, E_p[z])                                   soft attention
//   marginal     log Σ_i p(z=i) f(x, e_i)                           exact marginal likelihood, enumerated
//   hard-enum    Σ_i p(z=i) log f(x, e_i)                           hard attention (Jensen bound), enumerated
//   hard-sample  z ~ p, REINFORCE with the soft-attention baseline   hard attention, sampled
//   var-enum     Σ_i q_i log f(x, e_i) − KL(q‖p)                    variational attention, exact ELBO
//   var-sample   z ~ q, REINFORCE with the soft baseline, analytic KL
//   var-gumbel   z̃ = softmax((log q + g)/τ), context X z̃, analytic KL (relaxed, Gumbel-softmax)
//   var-rws      K samples from q, self-normalised weights (reweighted wake-sleep)
#include <string>
#include <string_view>

namespace lava {

enum class AttnVariant { none, soft, marginal, hard_enum, hard_sample, var_enum, var_sample, var_gumbel, var_rws };

struct AttnVariantInfo {
  AttnVariant variant;
  const char* name;
  const char* summary;  // the random object and the estimator, one line, for --help
  bool uses_q;          // trains an inference network q(z | x, y)
  bool latent;          // z is a latent variable: test likelihood is the exact marginal by enumeration
};

const AttnVariantInfo& variant_info(AttnVariant v);
AttnVariant parse_attn_variant(std::string_view name);  // UsageError naming --attn for an unknown word
std::string attn_variant_list();                          // "none|soft|marginal|..."
std::string attn_variant_help();                          // one line per variant

}  // namespace lava
