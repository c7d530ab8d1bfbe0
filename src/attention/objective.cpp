#include "attention/objective.hpp"

#include <algorithm>
#include <cmath>

#include "attention/attention_weights.hpp"
#include "attention/continuous.hpp"

namespace lava {

namespace {

// A constant (no-gradient) copy of values on the tape.
Var<float> constant(Tape<float>& tape, const Shape& s, const float* v) { return tape.input(s, v, false); }

// w[n, s] = 1[s = z_n]: (B, T, S)
Var<float> one_hot(Tape<float>& tape, const Shape& s, const int32_t* z) {
  Var<float> w = tape.full(s, 0.f);
  const int64_t S = s[-1], N = s.numel() / S;
  for (int64_t n = 0; n < N; ++n) w.val()[n * S + z[n]] = 1.f;
  return w;
}

// KL(q‖p) per query: Σ_s q_s (log q_s − log p_s)   -> (B, T)
Var<float> kl_categorical(Var<float> log_q, Var<float> log_p) { return sum(mul(exp(log_q), sub(log_q, log_p)), -1); }

double masked_sum(const float* per_token, const float* mask, int64_t n_tokens) {
  double s = 0;
  for (int64_t n = 0; n < n_tokens; ++n) s += double(mask[n]) * per_token[n];
  return s;
}
double masked_sum(Var<float> per_token, const float* mask) {
  return masked_sum(per_token.val(), mask, per_token.numel());
}

// K-max soft attention (`lava eval --kmax`): the prior kept at its kmax largest real positions (ties: the lower
// position) and renormalised, p_K,i = p_i 1[i ∈ top K] / Σ_{j ∈ top K} p_j, as decoding weighs the context: (B, T, S).
Var<float> top_k_prior(Tape<float>& tape, Var<float> log_prior, int kmax) {
  const Shape sdist = log_prior.shape();
  const int64_t S = sdist[-1], N = sdist.numel() / S;
  std::vector<float> w(static_cast<size_t>(N * S), 0.f);
  std::vector<std::pair<float, int64_t>> order;
  for (int64_t n = 0; n < N; ++n) {
    const float* lp = log_prior.val() + n * S;
    order.clear();
    for (int64_t s = 0; s < S; ++s)
      if (lp[s] > kMaskedLogit / 2) order.push_back({-lp[s], s});
    const size_t keep = std::min(order.size(), size_t(kmax));
    std::partial_sort(order.begin(), order.begin() + ptrdiff_t(keep), order.end());
    double z = 0;
    for (size_t k = 0; k < keep; ++k) z += std::exp(double(lp[order[k].second] - lp[order[0].second]));
    for (size_t k = 0; k < keep; ++k)
      w[size_t(n * S + order[k].second)] = float(std::exp(double(lp[order[k].second] - lp[order[0].second])) / z);
  }
  return constant(tape, sdist, w.data());
}

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
  const int64_t S = sdist[-1], N = sdist.numel() / S;
  const Shape stok = sdist.without(-1);
  Var<float> mask = constant(tape, stok, token_mask);
  ObjectiveTerms out;
  if (d.has_q()) add_entropy_sums(d, token_mask, out);
  Var<float> per_token;         // the objective per query, surrogate terms included
  Var<float> value = per_token;  // its value without surrogates (for reporting)
  Var<float> kl;

  if (variant_info(v).uses_q && !variant_info(v).sampled && opt.step < opt.warm_start) {
    // Warm start of a categorical q: the generative model trains on the exact marginal log Σ_i p_i f_i, and q on
    // the ELBO with p and f held fixed, Σ_i q_i (c_i − log q_i) with c = log p + log f constant, whose gradient
    // in q is that of −KL(q ‖ p(z | x, y)). So q learns the posterior of a model whose alignments the marginal
    // shapes, before the ELBO takes over. (The ELBO's θ-gradient equals the marginal's when q is that posterior.)
    Var<float> log_f = head.log_f_all(c, y);
    Var<float> joint = add(d.log_prior, log_f);
    Var<float> held = constant(tape, sdist, joint.val());
    kl = kl_categorical(d.log_q, d.log_prior);
    per_token = add(logsumexp(joint, -1), sum(mul(exp(d.log_q), sub(held, d.log_q)), -1));
    value = sub(sum(mul(exp(d.log_q), log_f), -1), kl);
    out.objective = sum_all(mul(per_token, mask));
    out.value_sum = masked_sum(value, token_mask);
    out.kl_sum = masked_sum(kl, token_mask);
    return out;
  }
  switch (v) {
    case AttnVariant::none:
    case AttnVariant::soft:
      per_token = value = head.log_f_weighted(c, exp(d.log_prior), y);
      break;
    case AttnVariant::structured:
    case AttnVariant::sigmoid:
      per_token = value = head.log_f_weighted(c, attention_weights(v, d), y);
      break;
    case AttnVariant::var_dirichlet:
    case AttnVariant::gauss_ctx:
    case AttnVariant::bam_weibull:
    case AttnVariant::bam_lognormal: {
      const ContinuousTerms t = continuous_objective(c, v, head, d, y, opt);
      per_token = t.per_token, value = t.value, kl = t.kl;
      break;
    }
    case AttnVariant::marginal:   // Σ_n log Σ_s p_s f_s
    case AttnVariant::hard_enum:  // Σ_n Σ_s p_s log f_s
    case AttnVariant::var_enum: {  // Σ_n (Σ_s q_s log f_s − KL(q‖p))
      // The enumerated output layer and its reduction over positions in one op (its gradient is formed in the
      // forward pass), weighted by the token mask.
      const bool var = v == AttnVariant::var_enum;
      std::vector<float> phi(static_cast<size_t>(N));
      out.objective = head.enumerated_objective(
          c, y, var ? d.log_q : d.log_prior, token_mask,
          v == AttnVariant::marginal ? EnumeratedObjective::marginal : EnumeratedObjective::expected, phi.data());
      out.value_sum = masked_sum(phi.data(), token_mask, N);
      if (var) {
        kl = kl_categorical(d.log_q, d.log_prior);
        out.objective = sub(out.objective, sum_all(mul(kl, mask)));
        out.kl_sum = masked_sum(kl, token_mask);
        out.value_sum -= out.kl_sum;
      }
      return out;
    }
    case AttnVariant::hard_sample:
    case AttnVariant::var_sample: {
      // REINFORCE with the soft-attention baseline B = log f(x, E_p[z]) (paper eq. 1): the score-function term
      // (log f(x, z) − B) ∇ log r(z), r = p or q, enters through a surrogate whose value is advantage · log r(z).
      const bool var = v == AttnVariant::var_sample;
      Var<float> log_r = var ? d.log_q : d.log_prior;
      std::vector<int32_t> z(static_cast<size_t>(N));
      sample_categorical(log_r.val(), N, S, c.next_rng(), 1, 0, z.data());
      if (opt.noise_out) opt.noise_out->assign(z.begin(), z.end());
      Var<float> lf = head.log_f_weighted(c, one_hot(tape, sdist, z.data()), y);
      std::vector<float> advantage(static_cast<size_t>(N));
      {
        NoGrad<float> no_grad(tape);
        Var<float> baseline = head.log_f_weighted(c, exp(d.log_prior), y);
        for (int64_t n = 0; n < N; ++n) advantage[size_t(n)] = lf.val()[n] - baseline.val()[n];
      }
      Var<float> surrogate = mul(constant(tape, stok, advantage.data()), pick(log_r, z.data()));
      value = lf;
      if (var) {
        kl = kl_categorical(d.log_q, d.log_prior);
        value = sub(lf, kl);
      }
      per_token = add(value, surrogate);
      break;
    }
    case AttnVariant::var_gumbel: {
      // z̃ = softmax((log q + g) / τ), g_s = −log(−log u_s): a reparameterised relaxed sample.
      std::vector<float> g(static_cast<size_t>(N * S));
      const CounterRng rng = c.next_rng();
      for (int64_t i = 0; i < N * S; ++i) g[size_t(i)] = float(-std::log(-std::log(rng.uniform(uint64_t(i)))));
      if (opt.noise_out) opt.noise_out->assign(g.begin(), g.end());
      Var<float> relaxed = softmax(affine(add(d.log_q, constant(tape, sdist, g.data())), 1.f / opt.temperature, 0.f), -1);
      kl = kl_categorical(d.log_q, d.log_prior);
      per_token = value = sub(head.log_f_weighted(c, relaxed, y), kl);
      break;
    }
    case AttnVariant::var_rws: {
      // K samples z_k ~ q; w_k ∝ p(z_k) f(z_k) / q(z_k), normalised over k and held constant;
      // objective Σ_k w_k (log f_k + log p(z_k) + log q(z_k)) trains θ (wake) and q (wake-phase q update).
      const int K = std::max(1, opt.samples);
      const CounterRng rng = c.next_rng();
      std::vector<Var<float>> terms;
      std::vector<std::vector<float>> log_w(static_cast<size_t>(K), std::vector<float>(size_t(N)));
      if (opt.noise_out) opt.noise_out->assign(size_t(N) * K, 0.f);
      for (int k = 0; k < K; ++k) {
        std::vector<int32_t> z(static_cast<size_t>(N));
        sample_categorical(d.log_q.val(), N, S, rng, uint64_t(K), uint64_t(k), z.data());
        if (opt.noise_out)
          for (int64_t n = 0; n < N; ++n) (*opt.noise_out)[size_t(n * K + k)] = float(z[size_t(n)]);
        Var<float> lf = head.log_f_weighted(c, one_hot(tape, sdist, z.data()), y);
        Var<float> lp = pick(d.log_prior, z.data()), lq = pick(d.log_q, z.data());
        for (int64_t n = 0; n < N; ++n) log_w[size_t(k)][size_t(n)] = lp.val()[n] - lq.val()[n] + lf.val()[n];
        terms.push_back(add(add(lf, lp), lq));
        if (k == 0) value = lf;
      }
      // Self-normalisation over k, per query: the max and the sum of exp(log w_j − max), computed once.
      std::vector<float> max_log_w(static_cast<size_t>(N));
      std::vector<double> norm(static_cast<size_t>(N));
      for (int64_t n = 0; n < N; ++n) {
        float m = log_w[0][size_t(n)];
        for (int j = 1; j < K; ++j) m = std::max(m, log_w[size_t(j)][size_t(n)]);
        double sum = 0;
        for (int j = 0; j < K; ++j) sum += std::exp(double(log_w[size_t(j)][size_t(n)] - m));
        max_log_w[size_t(n)] = m, norm[size_t(n)] = sum;
      }
      std::vector<float> w(static_cast<size_t>(N));
      Var<float> total;
      for (int k = 0; k < K; ++k) {
        for (int64_t n = 0; n < N; ++n)
          w[size_t(n)] = float(std::exp(double(log_w[size_t(k)][size_t(n)] - max_log_w[size_t(n)])) / norm[size_t(n)]);
        Var<float> weighted = mul(constant(tape, stok, w.data()), terms[size_t(k)]);
        total = k == 0 ? weighted : add(total, weighted);
      }
      kl = kl_categorical(d.log_q, d.log_prior);
      per_token = total;
      break;
    }
  }
  out.objective = sum_all(mul(per_token, mask));
  if (v == AttnVariant::structured && opt.crf_l2 > 0) {
    // L2 on the pairwise scores, crf_l2 · ‖b‖² per sentence (the trainer divides the objective by the batch rows).
    const float rows = float(sdist[0]);
    out.objective = sub(out.objective, affine(sum_all(square(d.extra.crf_pairwise)), opt.crf_l2 * rows, 0.f));
  }
  out.value_sum = masked_sum(value, token_mask);
  if (kl.tape) out.kl_sum = masked_sum(kl, token_mask);
  return out;
}

AttentionEvalSums attention_eval_batch(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                       const int32_t* y, const float* token_mask, int kmax) {
  const Shape sdist = d.log_prior.shape();
  const int64_t S = sdist[-1], N = sdist.numel() / S;
  const AttnVariantInfo& info = variant_info(v);
  if (info.sampled) return continuous_eval(c, v, head, d, y, token_mask);
  if (info.latent) {
    Var<float> log_f = head.log_f_all(c, y);
    return attention_eval(v, d.log_prior.val(), d.has_q() ? d.log_q.val() : nullptr, log_f.val(), nullptr,
                          token_mask, N, S, kmax);
  }
  Var<float> weights = v == AttnVariant::soft && kmax > 0 ? top_k_prior(c.tape, d.log_prior, kmax) : attention_weights(v, d);
  Var<float> direct = head.log_f_weighted(c, weights, y);
  return attention_eval(v, d.log_prior.val(), nullptr, nullptr, direct.val(), token_mask, N, S, kmax);
}

void AttentionEvalSums::add(const AttentionEvalSums& o) {
  tokens += o.tokens, log_lik += o.log_lik, elbo += o.elbo, kl += o.kl, kl_posterior += o.kl_posterior;
  entropy += o.entropy, q_entropy += o.q_entropy, mean_attn_log_lik += o.mean_attn_log_lik;
  sampled = sampled || o.sampled;
  max_identity_error = std::max(max_identity_error, o.max_identity_error);
}

AttentionEvalSums attention_eval(AttnVariant v, const float* log_prior, const float* log_q, const float* log_f,
                                 const float* soft_log_lik, const float* token_mask, int64_t N, int64_t S, int kmax) {
  AttentionEvalSums r;
  const bool latent = variant_info(v).latent;
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
    double elbo = 0, kl = 0, kl_post = 0, q_entropy = 0;
    for (int64_t s = 0; s < S; ++s) {
      const double lqs = lq[size_t(s)] - qm - std::log(qz), q = std::exp(lqs);
      if (q == 0) continue;
      const double lps = std::isinf(lp[size_t(s)]) ? -1e300 : lp[size_t(s)];  // K-max may cut a position q keeps
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
    r.max_identity_error = std::max(r.max_identity_error, std::abs((log_marginal - elbo) - kl_post));
  }
  return r;
}

}  // namespace lava
