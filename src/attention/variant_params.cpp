#include "attention/variant_params.hpp"

#include <fmt/format.h>

namespace lava {

namespace {
constexpr int kPriorHidden = 10;  // BAM's --att_se_hid_size
std::string str(float x) { return fmt::format("{}", x); }
}  // namespace

void VariantConfig::to_metadata(AttnVariant v, std::map<std::string, std::string>& meta) const {
  switch (v) {
    case AttnVariant::var_dirichlet:
      meta["alpha_transform"] = alpha_transform;
      break;
    case AttnVariant::gauss_ctx:
      meta["gauss_prior"] = gauss_prior;
      break;
    case AttnVariant::bam_weibull:
      meta["bam_prior"] = bam_prior, meta["k_weibull"] = str(k_weibull);
      meta["alpha_gamma"] = str(alpha_gamma), meta["beta_gamma"] = str(beta_gamma);
      break;
    case AttnVariant::bam_lognormal:
      meta["bam_prior"] = bam_prior, meta["sigma_q"] = str(sigma_q), meta["sigma_p"] = str(sigma_p);
      break;
    case AttnVariant::structured:
      meta["crf_lambda"] = str(crf_lambda);
      break;
    case AttnVariant::none:
    case AttnVariant::soft:
    case AttnVariant::marginal:
    case AttnVariant::hard_enum:
    case AttnVariant::hard_sample:
    case AttnVariant::var_enum:
    case AttnVariant::var_sample:
    case AttnVariant::var_gumbel:
    case AttnVariant::var_rws:
    case AttnVariant::sigmoid:
      return;  // no hyperparameters of the wider family
  }
  meta["eval_samples"] = fmt::format("{}", eval_samples);
}

VariantParams::VariantParams(ParamStore<float>& ps, AttnVariant v, const VariantConfig& cfg, int Hd) : cfg_(cfg) {
  if (v == AttnVariant::gauss_ctx) {
    sigma_W1_ = ps.add("attn/sigma/W1", Shape{Hd, Hd});
    sigma_b1_ = ps.add("attn/sigma/b1", Shape{Hd});
    sigma_W2_ = ps.add("attn/sigma/W2", Shape{Hd, Hd});
    sigma_b2_ = ps.add("attn/sigma/b2", Shape{Hd});
  }
  if ((v == AttnVariant::bam_weibull || v == AttnVariant::bam_lognormal) && cfg.bam_prior == "contextual") {
    prior_W1_ = ps.add("attn/prior/W1", Shape{Hd, kPriorHidden});
    prior_b1_ = ps.add("attn/prior/b1", Shape{kPriorHidden});
    prior_w2_ = ps.add("attn/prior/w2", Shape{kPriorHidden, 1});
    prior_b2_ = ps.add("attn/prior/b2", Shape{1});
  }
  if (v == AttnVariant::structured) crf_pairwise_ = ps.add("attn/crf/pairwise", Shape{2, 2});
}

VariantVars VariantParams::vars(Ctx& c) const {
  VariantVars x;
  x.cfg = cfg_;
  auto get = [&](int id) { return id >= 0 ? c.p(id) : Var<float>{}; };
  x.sigma_W1 = get(sigma_W1_), x.sigma_b1 = get(sigma_b1_), x.sigma_W2 = get(sigma_W2_), x.sigma_b2 = get(sigma_b2_);
  x.prior_W1 = get(prior_W1_), x.prior_b1 = get(prior_b1_), x.prior_w2 = get(prior_w2_), x.prior_b2 = get(prior_b2_);
  x.crf_pairwise = get(crf_pairwise_);
  return x;
}

}  // namespace lava
