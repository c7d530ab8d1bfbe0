// Log-normal attention weights, bam-lognormal (src/method.md §2.3), a Bayesian attention module (bam.hpp): per
// position of a query
//   log S_i ~ N(log p_i − σ_q²/2, σ_q²), so E S_i = p_i and w = S / Σ S = softmax(log p + σ_q ε);
//   prior log S_i ~ N(log π_i (contextual) or 0 (fixed), σ_p²); KL between the two normals of log S.
// Evaluation's importance ratio per position, ls = log S_i = μ_q + σ_q ε:
//   log N(ls; m_p, σ_p²) − log N(ls; μ_q, σ_q²) = −log σ_p − ((ls − m_p)/σ_p)²/2 + log σ_q + ε²/2.
#include <cmath>

#include <fmt/format.h>

#include "attention/variants/bam.hpp"
#include "prob/lognormal.hpp"

namespace lava {

namespace {

class LogNormalWeights : public BamLatent {
 public:
  using BamLatent::BamLatent;

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    BamLatent::write_config(cfg, meta);
    meta["sigma-q"] = fmt::format("{}", cfg.sigma_q), meta["sigma-p"] = fmt::format("{}", cfg.sigma_p);
  }

 protected:
  float log_s_noise(const VariantConfig& cfg, const CounterRng& rng, int64_t i) const override {
    return float(cfg.sigma_q * rng.normal(uint64_t(i)));
  }

  Var<float> position_kl(Ctx& c, const VariantConfig& cfg, const BamPosterior& P) const override {
    Tape<float>& tape = c.tape;
    const float sq = cfg.sigma_q;
    Var<float> mu_q = affine(P.phi, 1.f, -0.5f * sq * sq);
    Var<float> mu_p = P.log_pi.tape ? P.log_pi : tape.full(Shape{}, 0.f);
    return kl_lognormal(mu_q, tape.full(Shape{}, sq), mu_p, tape.full(Shape{}, cfg.sigma_p));
  }

  double draw_log_s(const VariantConfig& cfg, const BamPosterior& P, const CounterRng& rng, int64_t i,
                    double& ratio) const override {
    const double sq = cfg.sigma_q, sp = cfg.sigma_p, e = rng.normal(uint64_t(i));
    const double ls = double(P.phi.val()[i]) - 0.5 * sq * sq + sq * e;
    const double mp = P.log_pi.tape ? double(P.log_pi.val()[i]) : 0.0;
    ratio += -std::log(sp) - 0.5 * ((ls - mp) / sp) * ((ls - mp) / sp) + std::log(sq) + 0.5 * e * e;
    return ls;
  }
};

}  // namespace

const AttentionVariant& bam_lognormal_attention() {
  static const LogNormalWeights v(
      {.name = "bam-lognormal",
       .summary = "log S ~ N(log p - s^2/2, s^2), attention S/sum S; KL to a log-normal",
       .options = "eval-samples att-kl att-kl-anneal bam-prior sigma-q sigma-p",
       .sampled = true});
  return v;
}

}  // namespace lava
