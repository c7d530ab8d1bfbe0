// The Bayesian attention modules' shared parts (bam.hpp): the posterior's log p and the contextual prior, the
// training draw w = softmax(log p + noise), the masked KL, and the evaluation draw of every query's weights.
#include "attention/variants/bam.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "attention/objective_parts.hpp"

namespace lava {

namespace {

constexpr int kPriorHidden = 10;  // BAM's --att_se_hid_size

// log π_i = log_softmax_i g(U_i) per batch row, repeated over the T queries: (B, T, S).
Var<float> contextual_log_prior(const OutputHead& head, const VariantVars& x, const RealPositions& P) {
  const int64_t B = P.shape[0], T = P.shape[1], S = P.shape[2];
  Var<float> g = add(matmul(relu(add(matmul(head.memory, x.prior_W1), x.prior_b1)), x.prior_w2), x.prior_b2);
  std::vector<uint8_t> src_pad(size_t(B * S));  // the padding of each row's first query is its source's
  for (int64_t b = 0; b < B; ++b) std::copy_n(P.pad.data() + b * T * S, S, src_pad.data() + b * S);
  Var<float> log_pi = log_softmax(masked_fill(reshape(g, Shape{B, S}), src_pad.data(), Shape{B, S}, kMaskedLogit), -1);
  std::vector<int32_t> rows(size_t(B * T));
  for (int64_t n = 0; n < B * T; ++n) rows[size_t(n)] = int32_t(n / T);
  return masked_fill(embedding(log_pi, rows.data(), Shape{B, T}), P.pad.data(), P.shape, 0.f);
}

}  // namespace

BamPosterior BamLatent::build(Ctx& c, const OutputHead& head, const AttentionDists& d) {
  BamPosterior P;
  P.pos = real_positions(c, d);
  P.phi = masked_fill(d.log_prior, P.pos.pad.data(), P.pos.shape, 0.f);
  if (d.extra.cfg.bam_prior == "contextual") P.log_pi = contextual_log_prior(head, d.extra, P.pos);
  return P;
}

Var<float> BamLatent::analytic_kl(Ctx& c, const VariantConfig& cfg, const BamPosterior& P) const {
  return sum(mul(position_kl(c, cfg, P), P.pos.real), -1);
}

ContinuousTerms BamLatent::terms(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                                 const ObjectiveOptions& opt) const {
  const BamPosterior P = build(c, head, d);
  const VariantConfig& cfg = d.extra.cfg;
  const int64_t n = P.pos.shape.numel();
  const CounterRng rng = c.next_rng();
  std::vector<float> g(static_cast<size_t>(n));  // (B, T, S)
  for (int64_t i = 0; i < n; ++i) g[size_t(i)] = log_s_noise(cfg, rng, i);
  Var<float> lf = head.log_f_weighted(c, softmax(add(d.log_prior, c.tape.input(P.pos.shape, g.data())), -1), y);
  return kl_weighted_terms(lf, analytic_kl(c, cfg, P), kl_weight(opt));
}

AttentionEvalSums BamLatent::evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                                      const float* token_mask, int) const {
  const BamPosterior P = build(c, head, d);
  const VariantConfig& cfg = d.extra.cfg;
  const Shape shape = P.pos.shape;
  const int64_t S = shape[-1], N = shape.numel() / S;
  Var<float> kl = analytic_kl(c, cfg, P);
  std::vector<float> buf(size_t(shape.numel()));  // (B, T, S) the drawn weights
  std::vector<double> log_s(static_cast<size_t>(S));
  return importance_eval(c, head, d, y, token_mask, kl, [&](const CounterRng& rng, std::vector<double>& ratio) {
    for (int64_t q = 0; q < N; ++q) {
      double m = -INFINITY;
      for (int64_t s = 0; s < S; ++s) {
        const int64_t i = q * S + s;
        if (P.pos.pad[size_t(i)]) {  // S = 0
          log_s[size_t(s)] = -INFINITY;
          continue;
        }
        log_s[size_t(s)] = draw_log_s(cfg, P, rng, i, ratio[size_t(q)]);
        m = std::max(m, log_s[size_t(s)]);
      }
      normalise_log_weights(log_s, m, buf.data() + q * S);
    }
    return head.log_f_weighted(c, c.tape.input(shape, buf.data()), y);
  });
}

void BamLatent::declare_params(ParamStore<float>& ps, const VariantConfig& cfg, int Hd, VariantParamIds& ids) const {
  if (cfg.bam_prior != "contextual") return;
  ids.prior_W1 = ps.add("attn/prior/W1", Shape{Hd, kPriorHidden});
  ids.prior_b1 = ps.add("attn/prior/b1", Shape{kPriorHidden});
  ids.prior_w2 = ps.add("attn/prior/w2", Shape{kPriorHidden, 1});
  ids.prior_b2 = ps.add("attn/prior/b2", Shape{1});
}

void BamLatent::write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const {
  ContinuousLatent::write_config(cfg, meta);
  meta["bam-prior"] = cfg.bam_prior;
}

}  // namespace lava
