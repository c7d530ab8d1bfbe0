// What the continuous latent attentions share (continuous.hpp): the real positions, the KL-weighted terms, the
// normalisation of drawn log weights, and the importance-weighted evaluation
//   log p̂(y|x) = log (1/K) Σ_k e^{log w_k},   log w_k = log f(x, z_k)_y + log p(z_k) − log q(z_k)
// reduced per query in double with the max shift.
#include "attention/variants/continuous.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attention/attention_weights.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

RealPositions real_positions(Ctx& c, const AttentionDists& d) {
  RealPositions P;
  P.shape = d.log_prior.shape();
  const int64_t n = P.shape.numel(), S = P.shape[-1];
  P.pad.resize(size_t(n));
  P.real_host.resize(size_t(n));
  P.len = real_lengths(d.scores);
  for (int64_t i = 0; i < n; ++i) {
    P.pad[size_t(i)] = (i % S) >= P.len[size_t(i / S)];
    P.real_host[size_t(i)] = P.pad[size_t(i)] ? 0.f : 1.f;
  }
  P.real = c.tape.input(P.shape, P.real_host.data());
  return P;
}

ContinuousTerms kl_weighted_terms(Var<float> log_f, Var<float> kl, float w) {
  ContinuousTerms t;
  t.kl = kl;
  t.value = sub(log_f, kl);
  t.per_token = w == 1.f ? t.value : sub(log_f, affine(kl, w, 0.f));
  return t;
}

void normalise_log_weights(std::vector<double>& log_s, double m, float* w) {
  double z = 0;
  for (double ls : log_s) z += std::exp(ls - m);
  for (size_t s = 0; s < log_s.size(); ++s) {
    log_s[s] = log_s[s] - m - std::log(z);
    w[s] = float(std::exp(log_s[s]));
  }
}

float ContinuousLatent::kl_weight(const ObjectiveOptions& opt) const {
  const float base = opt.att_kl >= 0 ? opt.att_kl : default_kl_weight();
  if (opt.kl_anneal <= 0) return base;
  const double m = double(opt.kl_anneal);
  return base * float((std::tanh((double(opt.step) - m) / (m / 4.5)) + 1) / 2);
}

ObjectiveTerms ContinuousLatent::objective(Ctx& c, const OutputHead& head, const AttentionDists& d,
                                           const ObjectiveTargets& t, const ObjectiveOptions& opt) const {
  const ContinuousTerms ct = terms(c, head, d, t.y, opt);
  return masked_terms(ct.per_token, ct.value, ct.kl, t);
}

void ContinuousLatent::write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const {
  meta["eval-samples"] = fmt::format("{}", cfg.eval_samples);
}

AttentionEvalSums ContinuousLatent::importance_eval(Ctx& c, const OutputHead& head, const AttentionDists& d,
                                                    const int32_t* y, const float* token_mask, Var<float> kl,
                                                    const ImportanceDraw& draw) const {
  const Shape shape = d.log_prior.shape();
  const int64_t S = shape[-1], N = shape.numel() / S;
  const int K = std::max(1, d.extra.cfg.eval_samples);
  std::vector<double> log_w(size_t(K) * size_t(N)), lf_sum(static_cast<size_t>(N), 0.0);  // (K, B·T), (B·T)
  for (int k = 0; k < K; ++k) {
    const CounterRng rng = c.next_rng();
    std::vector<double> ratio(static_cast<size_t>(N), 0.0);  // log p(z_k) − log q(z_k) per query
    const Var<float> lf = draw(rng, ratio);
    for (int64_t q = 0; q < N; ++q) {
      log_w[size_t(k) * size_t(N) + size_t(q)] = double(lf.val()[q]) + ratio[size_t(q)];
      lf_sum[size_t(q)] += double(lf.val()[q]);
    }
  }
  Var<float> mean_attn = head.log_f_weighted(c, weights(d), y);
  AttentionEvalSums r;
  r.sampled = true;
  for (int64_t q = 0; q < N; ++q) {
    if (token_mask[q] == 0.f) continue;
    double m = -INFINITY, acc = 0, h = 0;
    for (int k = 0; k < K; ++k) m = std::max(m, log_w[size_t(k) * size_t(N) + size_t(q)]);
    for (int k = 0; k < K; ++k) acc += std::exp(log_w[size_t(k) * size_t(N) + size_t(q)] - m);
    for (int64_t s = 0; s < S; ++s) {
      const double lp = d.log_prior.val()[q * S + s], p = std::exp(lp);
      if (p > 0) h -= p * lp;
    }
    r.tokens += 1;
    r.log_lik += m + std::log(acc / K);
    r.kl += double(kl.val()[q]);
    r.elbo += lf_sum[size_t(q)] / K - double(kl.val()[q]);
    r.entropy += h;
    r.mean_attn_log_lik += double(mean_attn.val()[q]);
  }
  return r;
}

namespace {

const ContinuousLatent& continuous_member(AttnVariant v) {
  const auto* member = dynamic_cast<const ContinuousLatent*>(&*v);
  LAVA_CHECK(member != nullptr, "{} is not a continuous latent attention", variant_info(v).name);
  return *member;
}

}  // namespace

ContinuousTerms continuous_objective(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                     const int32_t* y, const ObjectiveOptions& opt) {
  return continuous_member(v).terms(c, head, d, y, opt);
}

float continuous_kl_weight(AttnVariant v, const ObjectiveOptions& opt) { return continuous_member(v).kl_weight(opt); }

AttentionEvalSums continuous_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                  const int32_t* y, const float* token_mask) {
  return continuous_member(v).evaluate(c, head, d, y, token_mask, 0);
}

}  // namespace lava
