#include "attention/objective.hpp"

#include <algorithm>
#include <cmath>

#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

// Σ over real tokens of H(q) and H(p), H(r) = −Σ_s r_s log r_s, in double (padding has r_s = 0 exactly).
void add_entropy_sums(const AttentionDists& d, const float* token_mask, ObjectiveTerms& out) {
  const int64_t S = d.log_prior.dim(-1), N = d.log_prior.numel() / S;
  const auto entropy = [S](const float* lr) {
    double h = 0;
    for (int64_t s = 0; s < S; ++s) {
      const double r = std::exp(double(lr[s]));
      if (r > 0) h -= r * double(lr[s]);
    }
    return h;
  };
  for (int64_t n = 0; n < N; ++n)
    if (token_mask[n] != 0.f) {
      out.q_entropy_sum += entropy(d.log_q.val() + n * S);
      out.prior_entropy_sum += entropy(d.log_prior.val() + n * S);
    }
}

}  // namespace

void sample_categorical(const float* log_probs, int64_t N, int64_t S, const CounterRng& rng, uint64_t stride,
                        uint64_t offset, int32_t* out) {
  for (int64_t n = 0; n < N; ++n) {
    const float* lp = log_probs + n * S;
    double total = 0;
    for (int64_t s = 0; s < S; ++s) total += std::exp(double(lp[s]));
    const double u = rng.uniform(uint64_t(n) * stride + offset) * total;
    double acc = 0;
    int32_t pick = 0;
    for (int64_t s = 0; s < S; ++s) {
      const double p = std::exp(double(lp[s]));
      if (p > 0) pick = int32_t(s);  // the last position with mass, in case rounding leaves u above the total
      acc += p;
      if (u < acc) break;
    }
    out[n] = pick;
  }
}

ObjectiveTerms attention_objective(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                   const int32_t* y, const float* token_mask, const ObjectiveOptions& opt) {
  Tape<float>& tape = c.tape;
  const Shape sdist = d.log_prior.shape();
  const ObjectiveTargets t{y, token_mask, constant(tape, sdist.without(-1), token_mask)};
  ObjectiveTerms entropies;
  if (d.has_q()) add_entropy_sums(d, token_mask, entropies);
  ObjectiveTerms out;
  if (variant_info(v).marginal_warm_start && opt.step < opt.warm_start) {
    // Warm start of a categorical q: the generative model trains on the exact marginal log Σ_i p_i f_i, and q on
    // the ELBO with p and f held fixed, Σ_i q_i (c_i − log q_i) with c = log p + log f constant, whose gradient
    // in q is that of −KL(q ‖ p(z | x, y)). So q learns the posterior of a model whose alignments the marginal
    // shapes, before the ELBO takes over. (The ELBO's θ-gradient equals the marginal's when q is that posterior.)
    Var<float> log_f = head.log_f_all(c, y);
    Var<float> joint = add(d.log_prior, log_f);
    Var<float> held = constant(tape, sdist, joint.val());
    Var<float> kl = kl_categorical(d.log_q, d.log_prior);
    Var<float> per_token = add(logsumexp(joint, -1), sum(mul(exp(d.log_q), sub(held, d.log_q)), -1));
    out = masked_terms(per_token, sub(sum(mul(exp(d.log_q), log_f), -1), kl), kl, t);
  } else {
    out = v->objective(c, head, d, t, opt);
  }
  if (!variant_info(v).sparse)  // a sparse q is not log_q's categorical: its variant sums its own entropies
    out.q_entropy_sum = entropies.q_entropy_sum, out.prior_entropy_sum = entropies.prior_entropy_sum;
  return out;
}

AttentionEvalSums attention_eval_batch(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                       const int32_t* y, const float* token_mask, int kmax) {
  return v->evaluate(c, head, d, y, token_mask, kmax);
}

float moving_baseline_update(float baseline, const ObjectiveTerms& t, float decay) {
  if (t.sampled_words == 0) return baseline;
  return float(double(decay) * baseline + (1.0 - double(decay)) * (t.sampled_log_lik / t.sampled_words));
}

void AttentionEvalSums::add(const AttentionEvalSums& o) {
  tokens += o.tokens, log_lik += o.log_lik, elbo += o.elbo, kl += o.kl, kl_posterior += o.kl_posterior;
  entropy += o.entropy, q_entropy += o.q_entropy, mean_attn_log_lik += o.mean_attn_log_lik, support += o.support;
  q_mass_cut += o.q_mass_cut, infinite_elbo_tokens += o.infinite_elbo_tokens;
  sampled = sampled || o.sampled;
  max_identity_error = std::max(max_identity_error, o.max_identity_error);
}

double AttentionEvalSums::identity_error() const {
  return sampled || (tokens > 0 && infinite_elbo_tokens == tokens) ? NAN : max_identity_error;
}

AttentionEvalSums attention_eval(AttnVariant v, const float* log_prior, const float* log_q, const float* log_f,
                                 const float* soft_log_lik, const float* token_mask, int64_t N, int64_t S, int kmax) {
  AttentionEvalSums r;
  const bool latent = variant_info(v).latent, sparse = variant_info(v).sparse;
  std::vector<double> lp(static_cast<size_t>(S)), lq(static_cast<size_t>(S)), lf(static_cast<size_t>(S));
  std::vector<std::pair<double, int64_t>> order(static_cast<size_t>(S));
  for (int64_t n = 0; n < N; ++n) {
    if (token_mask[n] == 0.f) continue;
    r.tokens += 1;
    // The prior in double, renormalised (and restricted to the top K with K-max).
    double m = -INFINITY;
    for (int64_t s = 0; s < S; ++s) m = std::max(m, double(log_prior[n * S + s]));
    std::vector<bool> keep(static_cast<size_t>(S), true);
    if (kmax > 0 && kmax < S) {
      for (int64_t s = 0; s < S; ++s) order[size_t(s)] = {-double(log_prior[n * S + s]), s};
      std::sort(order.begin(), order.end());
      for (int64_t s = kmax; s < S; ++s) keep[size_t(order[size_t(s)].second)] = false;
    }
    double z = 0;
    for (int64_t s = 0; s < S; ++s)
      if (keep[size_t(s)]) z += std::exp(double(log_prior[n * S + s]) - m);
    for (int64_t s = 0; s < S; ++s) {
      lp[size_t(s)] = keep[size_t(s)] ? double(log_prior[n * S + s]) - m - std::log(z) : -INFINITY;
      const double p = std::exp(lp[size_t(s)]);
      if (p > 0) r.entropy -= p * lp[size_t(s)];
    }
    if (!latent) {  // soft / none: the likelihood is direct, and there is no latent variable to bound
      r.log_lik += soft_log_lik[n];
      r.elbo += soft_log_lik[n];
      continue;
    }
    // Exact marginal log Σ_s p_s f_s and the exact posterior π_s = p_s f_s / marginal.
    double mm = -INFINITY;
    for (int64_t s = 0; s < S; ++s) {
      lf[size_t(s)] = double(log_f[n * S + s]);
      mm = std::max(mm, lp[size_t(s)] + lf[size_t(s)]);
    }
    double acc = 0;
    for (int64_t s = 0; s < S; ++s) acc += std::exp(lp[size_t(s)] + lf[size_t(s)] - mm);
    const double log_marginal = mm + std::log(acc);
    // q: the inference network's, or the prior itself (then ELBO = Jensen bound).
    double qz = 0, qm = -INFINITY;
    for (int64_t s = 0; s < S; ++s) {
      lq[size_t(s)] = log_q ? double(log_q[n * S + s]) : lp[size_t(s)];
      qm = std::max(qm, lq[size_t(s)]);
    }
    for (int64_t s = 0; s < S; ++s) qz += std::exp(lq[size_t(s)] - qm);
    // K-max can cut a position q keeps (K-max leaves the inference network's q whole, softmax or sparse): there
    // log p_K = −∞, so KL(q ‖ p_K) = KL(q ‖ posterior_K) = ∞ and the ELBO = −∞. They stay infinite (JSON null); the
    // mass q puts on the cut positions says by how much q and the top K disagree.
    double elbo = 0, kl = 0, kl_post = 0, q_entropy = 0;
    for (int64_t s = 0; s < S; ++s) {
      const double lqs = lq[size_t(s)] - qm - std::log(qz), q = std::exp(lqs);
      if (q == 0) continue;
      if (sparse) r.support += 1;  // q (or the prior) of a sparse variant: its support
      const double lps = lp[size_t(s)];
      if (std::isinf(lps)) r.q_mass_cut += q;
      elbo += q * (lf[size_t(s)] + lps - lqs);
      kl += q * (lqs - lps);
      q_entropy -= q * lqs;
      kl_post += q * (lqs - (lps + lf[size_t(s)] - log_marginal));
    }
    r.log_lik += log_marginal;
    r.elbo += elbo;
    r.kl += kl;
    r.q_entropy += q_entropy;
    r.kl_posterior += kl_post;
    if (std::isfinite(elbo))  // the identity log p − ELBO = KL(q ‖ posterior) between finite terms only
      r.max_identity_error = std::max(r.max_identity_error, std::abs((log_marginal - elbo) - kl_post));
    else
      r.infinite_elbo_tokens += 1;
  }
  return r;
}

}  // namespace lava
