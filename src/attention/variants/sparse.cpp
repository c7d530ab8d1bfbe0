// Sparse latent alignment (src/method.md §2.4): a categorical alignment whose distribution is sparsemax, or
// 1.5-entmax with --alpha 1.5, of the scores. Positions below the threshold have probability exactly 0, so the sums
// over z run over the support alone, exactly:
//   sparse-marginal  p = sparsemax(s);  log p(y|x) = log Σ_{i∈supp p} p_i f(x, e_i)_y
//   var-sparse       q = sparsemax(s_q), the prior p = softmax(s) (KL(q‖p) finite, since p > 0 everywhere);
//                    ELBO = Σ_{i∈supp q} q_i (log f(x, e_i)_y − log q_i + log p_i)
// Training evaluates the output layer at the support rows only (support_marginal_objective, support_elbo_objective).
// Evaluation hands enumerated_eval the distributions with log 0 = −∞ off the support, so the figures are exact:
// sparse-marginal's are those of its own p (ELBO = the Jensen bound), var-sparse's the marginal under the softmax p
// over every position, the ELBO and KL(q‖p) of the sparse q and KL(q‖posterior).
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

// sparsemax (α = 2) or 1.5-entmax of scores (B, T, S) over the real positions (scores above kMaskedLogit / 2) and,
// with token_mask (B, T), of the real queries only: a padded query gets all zeros, so it has no support rows.
// support (B·T), if not null, receives |supp| of each query.
Var<float> sparse_distribution(Var<float> scores, float alpha, const float* token_mask, int32_t* support) {
  const int64_t S = scores.dim(-1), N = scores.numel() / S;
  std::vector<uint8_t> excluded(size_t(N * S));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t s = 0; s < S; ++s)
      excluded[size_t(n * S + s)] =
          uint8_t(scores.val()[n * S + s] <= kMaskedLogit / 2 || (token_mask && token_mask[n] == 0.f));
  return alpha == 1.5f ? entmax15(scores, excluded.data(), support) : sparsemax(scores, excluded.data(), support);
}

// Σ over real tokens of Φ (N): a padded query has an empty support and Φ = log 0 there, which it must not add.
double real_token_sum(const std::vector<float>& phi, const float* token_mask) {
  double s = 0;
  for (size_t n = 0; n < phi.size(); ++n)
    if (token_mask[n] != 0.f) s += double(token_mask[n]) * phi[n];
  return s;
}

// Σ over real tokens of the support sizes: (B·T) sizes.
double support_sum(const std::vector<int32_t>& support, const float* token_mask) {
  double s = 0;
  for (size_t n = 0; n < support.size(); ++n) s += double(token_mask[n]) * support[n];
  return s;
}

// Σ over real tokens of KL(q‖p) = Σ_{s∈supp q} q_s (log q_s − log p_s), H(q) and H(p), in double: q (N, S) sparse,
// log p (N, S) a log-softmax (finite at every real position, and q is 0 at the others).
void sparse_q_sums(const float* q, const float* log_p, const float* token_mask, int64_t N, int64_t S,
                   ObjectiveTerms& out) {
  for (int64_t n = 0; n < N; ++n) {
    if (token_mask[n] == 0.f) continue;
    for (int64_t s = 0; s < S; ++s) {
      const double qs = q[n * S + s], lps = log_p[n * S + s], ps = std::exp(lps);
      if (qs > 0) {
        out.kl_sum += qs * (std::log(qs) - lps);
        out.q_entropy_sum -= qs * std::log(qs);
      }
      if (ps > 0) out.prior_entropy_sum -= ps * lps;
    }
  }
}

class SparseMarginal : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  // Decoding and pictures read the sparse prior itself.
  Var<float> weights(const AttentionDists& d) const override {
    return sparse_distribution(d.scores, d.extra.cfg.sparse_alpha, nullptr, nullptr);
  }
  Var<float> prior_log_probs(const AttentionDists& d) const override { return log(weights(d)); }

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions&) const override {
    const int64_t N = d.scores.numel() / d.scores.dim(-1);
    std::vector<int32_t> support(static_cast<size_t>(N));
    std::vector<float> phi(static_cast<size_t>(N));
    Var<float> p = sparse_distribution(d.scores, d.extra.cfg.sparse_alpha, t.token_mask, support.data());
    ObjectiveTerms out;
    out.objective = support_marginal_objective(head.pair_rows(c), head.W_gen, head.b_gen, p, t.y, t.token_mask,
                                               phi.data(), support.data());
    out.value_sum = real_token_sum(phi, t.token_mask);
    out.support_sum = support_sum(support, t.token_mask);
    return out;
  }

  AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                             const float* token_mask, int kmax) const override {
    AttentionDists sparse = d;
    sparse.log_prior = log(sparse_distribution(d.scores, d.extra.cfg.sparse_alpha, token_mask, nullptr));
    sparse.log_q = {};  // no inference network: the figures' q is p itself (ELBO = Jensen's bound)
    return enumerated_eval(c, *this, head, sparse, y, token_mask, kmax);
  }

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    meta["alpha"] = fmt::format("{}", cfg.sparse_alpha);
  }
};

class VarSparse : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  Var<float> q_log_probs(const AttentionDists& d) const override {
    return log(sparse_distribution(d.q_scores, d.extra.cfg.sparse_alpha, nullptr, nullptr));
  }

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions&) const override {
    const int64_t S = d.q_scores.dim(-1), N = d.q_scores.numel() / S;
    std::vector<int32_t> support(static_cast<size_t>(N));
    std::vector<float> phi(static_cast<size_t>(N));
    Var<float> q = sparse_distribution(d.q_scores, d.extra.cfg.sparse_alpha, t.token_mask, support.data());
    ObjectiveTerms out;
    out.objective = support_elbo_objective(head.pair_rows(c), head.W_gen, head.b_gen, q, d.log_prior, t.y,
                                           t.token_mask, phi.data(), support.data());
    out.value_sum = real_token_sum(phi, t.token_mask);
    out.support_sum = support_sum(support, t.token_mask);
    sparse_q_sums(q.val(), d.log_prior.val(), t.token_mask, N, S, out);
    return out;
  }

  AttentionEvalSums evaluate(Ctx& c, const OutputHead& head, const AttentionDists& d, const int32_t* y,
                             const float* token_mask, int kmax) const override {
    AttentionDists sparse = d;
    sparse.log_q = log(sparse_distribution(d.q_scores, d.extra.cfg.sparse_alpha, token_mask, nullptr));
    return enumerated_eval(c, *this, head, sparse, y, token_mask, kmax);
  }

  void write_config(const VariantConfig& cfg, std::map<std::string, std::string>& meta) const override {
    meta["alpha"] = fmt::format("{}", cfg.sparse_alpha);
  }
};

}  // namespace

const AttentionVariant& sparse_marginal_attention() {
  static const SparseMarginal v({.name = "sparse-marginal",
                                 .summary = "z ~ p = sparsemax(s) (--alpha 1.5: entmax); exact log sum_{supp p} p_i f_i",
                                 .options = "alpha",
                                 .latent = true,
                                 .trains_likelihood = true,
                                 .decodes_prior = false,
                                 .crosscheck = true,
                                 .sparse = true});
  return v;
}

const AttentionVariant& var_sparse_attention() {
  static const VarSparse v({.name = "var-sparse",
                            .summary = "q = sparsemax(s_q) (or entmax), p softmax; exact ELBO over supp q",
                            .options = "alpha",
                            .uses_q = true,
                            .latent = true,
                            .crosscheck = true,
                            .sparse = true});
  return v;
}

}  // namespace lava
