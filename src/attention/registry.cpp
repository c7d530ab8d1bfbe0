// The registry of attention variants: one line per variant makes it exist everywhere — `--attn` and its help for
// each task it supports, the model file (its name is how the file stores it), the sweep, the cross-check list and
// the tables' rows. The order is that of --help and the tables. Paper Table 1 naming → `--attn` word:
//   none         no attention: a fixed, uniform average of the memory (the fixed-vector encoder-decoder)
//   soft         log f(x, E_p[z])                                   soft attention
//   marginal     log Σ_i p(z=i) f(x, e_i)                           exact marginal likelihood, enumerated
//   hard-enum    Σ_i p(z=i) log f(x, e_i)                           hard attention (Jensen bound), enumerated
//   hard-sample  z ~ p, REINFORCE with the soft-attention baseline   hard attention, sampled
//   var-enum     Σ_i q_i log f(x, e_i) − KL(q‖p)                    variational attention, exact ELBO
//   var-sample   z ~ q, REINFORCE with the soft baseline, analytic KL
//   var-gumbel   z̃ = softmax((log q + g)/τ), context X z̃, analytic KL (relaxed, Gumbel-softmax)
//   var-rws      K samples from q, self-normalised weights (reweighted wake-sleep)
// Sparse latent alignment (sparsemax, or 1.5-entmax with --alpha 1.5; sums over the support only):
//   sparse-marginal  log Σ_{i∈supp p} p_i f(x, e_i), p = sparsemax(s)   exact marginal over the support
//   var-sparse       Σ_{i∈supp q} q_i (log f_i − log q_i + log p_i), q sparse, p softmax   exact ELBO
// The wider family:
//   var-dirichlet  z ~ Dir(α_q), α from q's scores; E_q log f(x, X z) − KL(Dir(α_q) ‖ Dir(α_p))
//   gauss-ctx      context c ~ N(μ = soft context, σ²), σ from μ; log f(x, c) − w·KL(N ‖ N(mean, I))
//   bam-weibull    S_i ~ Weibull(k, λ_i), E S_i = p_i; attention S/ΣS; log f − w·KL(Weibull ‖ Gamma)
//   bam-lognormal  log S_i ~ N(log p_i − σ²/2, σ²); attention S/ΣS; log f − w·KL(logN ‖ logN)
//   structured     binary linear-chain CRF over positions; context Σ_i λ p(z_i = 1) x_i / Σ_i p(z_i = 1)
//   sigmoid        context Σ_i sigmoid(s_i) x_i (structured attention's baseline)
// and captioning's sat-hard, Show, Attend and Tell's hard attention with a moving-average baseline.
// The sampled ones (var-dirichlet, gauss-ctx, bam-*) estimate log p(y|x) by importance sampling with K draws from
// their posterior (a stochastic lower bound that tightens with K); structured and sigmoid are deterministic.
#include "attention/attention_variant.hpp"

namespace lava {

// Each defined in its variant's (or family's) file under attention/variants/.
const AttentionVariant& no_attention();
const AttentionVariant& soft_attention();
const AttentionVariant& sat_hard_attention();
const AttentionVariant& marginal_attention();
const AttentionVariant& hard_enum_attention();
const AttentionVariant& hard_sample_attention();
const AttentionVariant& var_enum_attention();
const AttentionVariant& sparse_marginal_attention();
const AttentionVariant& var_sparse_attention();
const AttentionVariant& var_sample_attention();
const AttentionVariant& var_gumbel_attention();
const AttentionVariant& var_rws_attention();
const AttentionVariant& var_dirichlet_attention();
const AttentionVariant& gauss_ctx_attention();
const AttentionVariant& bam_weibull_attention();
const AttentionVariant& bam_lognormal_attention();
const AttentionVariant& structured_attention();
const AttentionVariant& sigmoid_attention();

const AttnVariantRegistry& attn_registry() {
  static const AttnVariantRegistry registry({
      no_attention(),
      soft_attention(),
      sat_hard_attention(),
      marginal_attention(),
      hard_enum_attention(),
      hard_sample_attention(),
      var_enum_attention(),
      var_sample_attention(),
      var_gumbel_attention(),
      var_rws_attention(),
      sparse_marginal_attention(),
      var_sparse_attention(),
      var_dirichlet_attention(),
      gauss_ctx_attention(),
      bam_weibull_attention(),
      bam_lognormal_attention(),
      structured_attention(),
      sigmoid_attention(),
  });
  return registry;
}

AttnVariant::AttnVariant() : v_(&soft_attention()) {}

}  // namespace lava
