#include "attention/variant.hpp"

#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

namespace {
constexpr AttnVariantInfo kVariants[] = {
    {AttnVariant::none, "none", "no attention: f sees a fixed uniform average of the memory", false, false},
    {AttnVariant::soft, "soft", "deterministic context E_p[z]; trains log f(x, E_p[z])", false, false},
    {AttnVariant::marginal, "marginal", "z ~ p categorical; exact log sum_i p_i f_i by enumeration", false, true},
    {AttnVariant::hard_enum, "hard-enum", "z ~ p; Jensen bound sum_i p_i log f_i, enumerated", false, true},
    {AttnVariant::hard_sample, "hard-sample", "z ~ p; one sample, REINFORCE with the soft-attention baseline", false,
     true},
    {AttnVariant::var_enum, "var-enum", "z ~ q(z|x,y); exact ELBO sum_i q_i log f_i - KL(q||p)", true, true},
    {AttnVariant::var_sample, "var-sample", "z ~ q; one sample, REINFORCE with the soft baseline, analytic KL", true,
     true},
    {AttnVariant::var_gumbel, "var-gumbel", "relaxed z = softmax((log q + g)/tau), reparameterised, analytic KL", true,
     true},
    {AttnVariant::var_rws, "var-rws", "K samples from q, self-normalised importance weights (wake-sleep)", true, true},
    {AttnVariant::var_dirichlet, "var-dirichlet",
     "relaxed z ~ Dir(alpha_q), reparameterised (implicit gamma gradients); ELBO with KL(Dir||Dir)", true, false, true},
    {AttnVariant::gauss_ctx, "gauss-ctx", "context ~ N(soft context, sigma^2), reparameterised; KL to N(mean, I)",
     false, false, true},
    {AttnVariant::bam_weibull, "bam-weibull", "weights S ~ Weibull(k, p/G(1+1/k)), attention S/sum S; KL to a Gamma prior",
     false, false, true},
    {AttnVariant::bam_lognormal, "bam-lognormal", "log S ~ N(log p - s^2/2, s^2), attention S/sum S; KL to a log-normal",
     false, false, true},
    {AttnVariant::structured, "structured", "binary linear-chain CRF over positions; context from its marginals", false,
     false},
    {AttnVariant::sigmoid, "sigmoid", "independent gates: context sum_i sigmoid(s_i) x_i (structured's baseline)", false,
     false},
};
}  // namespace

const AttnVariantInfo& variant_info(AttnVariant v) {
  for (const AttnVariantInfo& info : kVariants)
    if (info.variant == v) return info;
  throw std::logic_error("unknown attention variant");
}

const char* likelihood_kind(AttnVariant v) {
  const AttnVariantInfo& info = variant_info(v);
  return info.latent ? "exact" : info.sampled ? "sampled" : "direct";
}

double valid_criterion(AttnVariant v, double nll, double elbo) {
  const bool trains_likelihood = v == AttnVariant::none || v == AttnVariant::soft || v == AttnVariant::marginal ||
                                 v == AttnVariant::structured || v == AttnVariant::sigmoid;
  return trains_likelihood ? -nll : elbo;
}

AttnVariant parse_attn_variant(std::string_view name) {
  for (const AttnVariantInfo& info : kVariants)
    if (name == info.name) return info.variant;
  throw UsageError(fmt::format("--attn: {} is not one of {}", quote_input(name), attn_variant_list()));
}

std::string attn_variant_list() {
  std::string s;
  for (const AttnVariantInfo& info : kVariants) {
    if (!s.empty()) s += '|';
    s += info.name;
  }
  return s;
}

std::string attn_variant_help() {
  std::string s;
  for (const AttnVariantInfo& info : kVariants) s += fmt::format("  {:<14} {}\n", info.name, info.summary);
  return s;
}

}  // namespace lava
