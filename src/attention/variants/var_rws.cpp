// Variational attention by reweighted wake-sleep, var-rws: K samples z_k ~ q(z | x, y) (K = --samples) and
// self-normalised importance weights w_k ∝ p(z_k) f(x, z_k) / q(z_k), held constant; the objective
// Σ_k w_k (log f_k + log p(z_k) + log q(z_k)) trains θ (wake) and q (the wake-phase q update). The reported value
// is log f of the first sample, and the KL the analytic KL(q‖p).
// Crosscheck noise (ObjectiveOptions::noise_out): the drawn z, K per query, sample k of query n at n·K + k.
#include <algorithm>
#include <cmath>

#include "attention/attention_variant.hpp"
#include "attention/objective_parts.hpp"

namespace lava {

namespace {

class VarRws : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;

  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions& opt) const override {
    Tape<float>& tape = c.tape;
    const Shape sdist = d.log_prior.shape();
    const int64_t S = sdist[-1], N = sdist.numel() / S;
    const int K = std::max(1, opt.samples);
    const CounterRng rng = c.next_rng();
    std::vector<Var<float>> terms;
    std::vector<std::vector<float>> log_w(static_cast<size_t>(K), std::vector<float>(size_t(N)));
    Var<float> value;
    if (opt.noise_out) opt.noise_out->assign(size_t(N) * K, 0.f);
    for (int k = 0; k < K; ++k) {
      std::vector<int32_t> z(static_cast<size_t>(N));
      sample_categorical(d.log_q.val(), N, S, rng, uint64_t(K), uint64_t(k), z.data());
      if (opt.noise_out)
        for (int64_t n = 0; n < N; ++n) (*opt.noise_out)[size_t(n * K + k)] = float(z[size_t(n)]);
      Var<float> lf = head.log_f_weighted(c, one_hot(tape, sdist, z.data()), t.y);
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
      Var<float> weighted = mul(constant(tape, sdist.without(-1), w.data()), terms[size_t(k)]);
      total = k == 0 ? weighted : add(total, weighted);
    }
    Var<float> kl = kl_categorical(d.log_q, d.log_prior);
    return masked_terms(total, value, kl, t);
  }
};

}  // namespace

const AttentionVariant& var_rws_attention() {
  static const VarRws v({.name = "var-rws",
                         .summary = "K samples from q, self-normalised importance weights (wake-sleep)",
                         .options = "samples warm-start",
                         .uses_q = true,
                         .latent = true,
                         .marginal_warm_start = true,
                         .crosscheck = true,
                         .paper = {.rank = 9,
                                   .model = "Variational Attention (RWS)",
                                   .objective = "wake-sleep",
                                   .estimator = "Sample (K)",
                                   .nmt_ppl = 6.41,
                                   .nmt_bleu = 32.96,
                                   .inference_rank = 3,
                                   .inference_note = "draws K = {samples} samples from q"}});
  return v;
}

}  // namespace lava
