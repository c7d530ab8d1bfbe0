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
// The wider family (paper-notes §1.5, §7, §8, §9; attention/continuous.hpp, attention/structured.hpp):
//   var-dirichlet  z ~ Dir(α_q), α from q's scores; E_q log f(x, X z) − KL(Dir(α_q) ‖ Dir(α_p))
//   gauss-ctx      context c ~ N(μ = soft context, σ²), σ from μ; log f(x, c) − w·KL(N ‖ N(mean, I))
//   bam-weibull    S_i ~ Weibull(k, λ_i), E S_i = p_i; attention S/ΣS; log f − w·KL(Weibull ‖ Gamma)
//   bam-lognormal  log S_i ~ N(log p_i − σ²/2, σ²); attention S/ΣS; log f − w·KL(logN ‖ logN)
//   structured     binary linear-chain CRF over positions; context Σ_i λ p(z_i = 1) x_i / Σ_i p(z_i = 1)
//   sigmoid        context Σ_i sigmoid(s_i) x_i (structured attention's baseline)
// The sampled ones (var-dirichlet, gauss-ctx, bam-*) estimate log p(y|x) by importance sampling with K draws from
// their posterior (a stochastic lower bound that tightens with K); structured and sigmoid are deterministic.
#include <string>
#include <string_view>

namespace lava {

enum class AttnVariant {
  none, soft, marginal, hard_enum, hard_sample, var_enum, var_sample, var_gumbel, var_rws,
  var_dirichlet, gauss_ctx, bam_weibull, bam_lognormal, structured, sigmoid
};

struct AttnVariantInfo {
  AttnVariant variant;
  const char* name;
  const char* summary;  // the random object and the estimator, one line, for --help
  bool uses_q;          // trains an inference network q(z | x, y)
  bool latent;          // z is a latent variable: test likelihood is the exact marginal by enumeration
  bool sampled = false;  // a continuous latent: likelihood estimated by importance sampling (--eval-samples)
};

// How a variant's reported likelihood is obtained: "exact" (enumerated marginal), "direct" (a deterministic
// attention's log f) or "sampled" (importance-weighted estimate).
const char* likelihood_kind(AttnVariant v);

// The validation figure (larger is better) that selects the best checkpoint and drives learning-rate decay: the
// bound the variant trains, per token or question — log p(y|x) for the variants that train the likelihood itself
// (none, soft, marginal, structured, sigmoid), the ELBO otherwise (the Jensen bound for hard-*).
double valid_criterion(AttnVariant v, double nll, double elbo);

const AttnVariantInfo& variant_info(AttnVariant v);
AttnVariant parse_attn_variant(std::string_view name);  // UsageError naming --attn for an unknown word
std::string attn_variant_list();                          // "none|soft|marginal|..."
std::string attn_variant_help();                          // one line per variant

}  // namespace lava
