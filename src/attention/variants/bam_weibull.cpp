// Weibull attention weights, bam-weibull (Fan et al. 2020; src/method.md §2.3), a Bayesian attention module
// (bam.hpp): per position of a query
//   S_i ~ Weibull(k, λ_i), λ_i = p_i / Γ(1 + 1/k) so E S_i = p_i; log S_i = log λ_i + (1/k) log(−log(1 − u));
//   prior S_i ~ Gamma(α_i, β) with α_i = β π_i (contextual) or α (fixed); KL(Weibull ‖ Gamma) closed form.
// Evaluation's importance ratio per position, with E = −log(1 − u) and ls = log S_i:
//   log q = log k − log λ + (k − 1)(ls − log λ) − E
//   log p = α log β − log Γ(α) + (α − 1) ls − β e^{ls}
// (both densities of log S; the Jacobian e^{ls} cancels).
#include <cmath>

#include <fmt/format.h>

#include "attention/variants/bam.hpp"
#include "prob/gamma.hpp"
#include "prob/weibull.hpp"

namespace lava {

namespace {

class WeibullWeights : public BamLatent {
 public:
  using BamLatent::BamLatent;

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    BamLatent::write_config(cfg, meta);
    const auto str = [](float x) { return fmt::format("{}", x); };
    meta["k-weibull"] = str(cfg.k_weibull), meta["alpha-gamma"] = str(cfg.alpha_gamma);
    meta["beta-gamma"] = str(cfg.beta_gamma);
  }

  std::string option_unread(const VariantConfig& cfg, std::string_view option) const override {
    if (option == "alpha-gamma" && cfg.bam_prior != "fixed")
      return "with --bam-prior " + cfg.bam_prior + " (the contextual prior's Gamma shape is beta-gamma times pi; "
             "--alpha-gamma is the fixed prior's)";
    return "";
  }

 protected:
  float log_s_noise(const VariantConfig& cfg, const CounterRng& rng, int64_t i) const override {
    return float(std::log(-std::log1p(-rng.uniform(uint64_t(i)))) / cfg.k_weibull);
  }

  Var<float> position_kl(Ctx& c, const VariantConfig& cfg, const BamPosterior& P) const override {
    Tape<float>& tape = c.tape;
    const float k = cfg.k_weibull;
    Var<float> lambda = exp(affine(P.phi, 1.f, -std::lgamma(1.f + 1.f / k)));
    Var<float> beta = tape.full(Shape{}, cfg.beta_gamma);
    // Contextual α_i = β π_i (padding: π = 1, masked out by the caller); fixed α.
    Var<float> alpha = P.log_pi.tape ? affine(exp(P.log_pi), cfg.beta_gamma, 0.f) : tape.full(Shape{}, cfg.alpha_gamma);
    return kl_weibull_gamma(tape.full(Shape{}, k), lambda, alpha, beta);
  }

  double draw_log_s(const VariantConfig& cfg, const BamPosterior& P, const CounterRng& rng, int64_t i,
                    double& ratio) const override {
    const double k = cfg.k_weibull, beta = cfg.beta_gamma;
    const double log_lambda = double(P.phi.val()[i]) - std::lgamma(1 + 1 / k);
    const double E = -std::log1p(-rng.uniform(uint64_t(i))), ls = log_lambda + std::log(E) / k;
    const double alpha = P.log_pi.tape ? beta * std::exp(double(P.log_pi.val()[i])) : double(cfg.alpha_gamma);
    const double log_q = std::log(k) - log_lambda + (k - 1) * (ls - log_lambda) - E;
    const double log_p = alpha * std::log(beta) - std::lgamma(alpha) + (alpha - 1) * ls - beta * std::exp(ls);
    ratio += log_p - log_q;
    return ls;
  }
};

}  // namespace

const AttentionVariant& bam_weibull_attention() {
  static const WeibullWeights v(
      {.name = "bam-weibull",
       .summary = "weights S ~ Weibull(k, p/G(1+1/k)), attention S/sum S; KL to a Gamma prior",
       .options = "eval-samples att-kl att-kl-anneal bam-prior k-weibull alpha-gamma beta-gamma",
       .sampled = true});
  return v;
}

}  // namespace lava
