#include "attention/variant_params.hpp"

#include "attention/attention_variant.hpp"

namespace lava {

void VariantConfig::to_metadata(AttnVariant v, std::map<std::string, std::string>& meta) const {
  v->write_config(*this, meta);
}

VariantParams::VariantParams(ParamStore<float>& ps, AttnVariant v, const VariantConfig& cfg, int Hd) : cfg_(cfg) {
  v->declare_params(ps, cfg, Hd, ids_);
}

VariantVars VariantParams::vars(Ctx& c) const {
  VariantVars x;
  x.cfg = cfg_;
  auto get = [&](int id) { return id >= 0 ? c.p(id) : Var<float>{}; };
  const VariantParamIds& i = ids_;
  x.sigma_W1 = get(i.sigma_W1), x.sigma_b1 = get(i.sigma_b1);
  x.sigma_W2 = get(i.sigma_W2), x.sigma_b2 = get(i.sigma_b2);
  x.prior_W1 = get(i.prior_W1), x.prior_b1 = get(i.prior_b1);
  x.prior_w2 = get(i.prior_w2), x.prior_b2 = get(i.prior_b2);
  x.crf_pairwise = get(i.crf_pairwise);
  return x;
}

}  // namespace lava
