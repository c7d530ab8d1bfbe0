#include "tasks/seqvae/eval.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace lava {

CorpusOptions seqvae_corpus_options(const SeqVaeDataOptions& d) {
  CorpusOptions o;
  o.dir = d.dir;
  o.src_lang = o.tgt_lang = d.lang;
  o.max_len = d.max_len;
  return o;
}

namespace {

// Sums over sentences, in evaluation order.
struct EvalSums {
  int64_t sentences = 0, tokens = 0;
  double recon = 0, kl = 0, iw = 0;
  std::vector<double> kl_dim;
  std::vector<float> mu;  // (sentences, Z)
};

// log (1/K) Σ_k exp(a_k), shifted by the maximum.
double log_mean_exp(const std::vector<double>& a) {
  const double m = *std::max_element(a.begin(), a.end());
  double s = 0;
  for (double x : a) s += std::exp(x - m);
  return m + std::log(s / double(a.size()));
}

}  // namespace

SeqVaeEvalFigures evaluate_seqvae(SeqVae& model, const ParallelSplit& split, const SeqVaeEvalOptions& opt) {
  LAVA_CHECK(opt.samples >= 1 && opt.batch_size >= 1, "samples {} batch size {}", opt.samples, opt.batch_size);
  const int Z = model.config().latent, K = opt.samples;
  const size_t n_use = opt.limit > 0 ? std::min(split.pairs.size(), size_t(opt.limit)) : split.pairs.size();
  const std::vector<SentencePair> pairs(split.pairs.begin(), split.pairs.begin() + ptrdiff_t(n_use));
  Tape<float> tape;
  NoGrad<float> no_grad(tape);
  EvalSums sums;
  sums.kl_dim.assign(size_t(Z), 0.0);
  const CounterRng eval_noise(opt.seed, stream_id("seqvae/eval"));
  uint64_t batch_no = 0;
  for (const std::vector<int>& idx : eval_batches(pairs, opt.batch_size)) {
    tape.reset();
    Ctx c{tape, model.ps, false, CounterRng(opt.seed, stream_id("seqvae/eval/dropout")), 0.f};
    const Batch batch = make_batch(pairs, idx);
    const int B = batch.B, T = batch.T;
    SeqVaeEncoding enc = model.encode(c, batch);
    const float* mu = enc.mu.val();
    const float* sigma = enc.sigma.val();
    // KL_bd = −log σ + (σ² + μ²)/2 − 1/2, in double (the same closed form as kl_gaussian with p = N(0, 1)).
    std::vector<double> kl_b(size_t(B), 0.0);
    for (int b = 0; b < B; ++b)
      for (int d = 0; d < Z; ++d) {
        const double m = mu[b * Z + d], s = sigma[b * Z + d];
        const double kl = -std::log(s) + 0.5 * (s * s + m * m) - 0.5;
        kl_b[size_t(b)] += kl;
        sums.kl_dim[size_t(d)] += kl;
      }
    std::vector<double> recon_b(size_t(B), 0.0);
    std::vector<std::vector<double>> log_w(size_t(B), std::vector<double>(static_cast<size_t>(K)));  // (B, K)
    for (int k = 0; k < K; ++k) {
      Var<float> z = model.sample_z(enc, eval_noise.child(batch_no * uint64_t(K) + uint64_t(k)));
      Var<float> lp = model.token_log_probs(c, batch, enc, z);  // (B, T)
      for (int b = 0; b < B; ++b) {
        double r = 0;
        for (int t = 0; t < T; ++t) r += double(lp.val()[b * T + t]);
        recon_b[size_t(b)] += r / double(K);
        // log w = log p(X|z) + log N(z; 0, I) − log N(z; μ, σ²) = r + Σ_d [−z²/2 + ε²/2 + log σ], ε = (z − μ)/σ
        double lw = r;
        for (int d = 0; d < Z; ++d) {
          const double zd = z.val()[b * Z + d], s = sigma[b * Z + d], e = (zd - mu[b * Z + d]) / s;
          lw += -0.5 * zd * zd + 0.5 * e * e + std::log(s);
        }
        log_w[size_t(b)][size_t(k)] = lw;
      }
    }
    for (int b = 0; b < B; ++b) {
      sums.recon += recon_b[size_t(b)];
      sums.kl += kl_b[size_t(b)];
      sums.iw += log_mean_exp(log_w[size_t(b)]);
    }
    sums.mu.insert(sums.mu.end(), mu, mu + int64_t(B) * Z);
    sums.sentences += B;
    sums.tokens += batch.target_tokens();
    ++batch_no;
  }

  SeqVaeEvalFigures f;
  const double n = double(std::max<int64_t>(1, sums.sentences)), ntok = double(std::max<int64_t>(1, sums.tokens));
  f.sentences = sums.sentences, f.tokens = sums.tokens, f.samples = K, f.latent = Z;
  f.recon = sums.recon / n, f.kl = sums.kl / n, f.elbo = (sums.recon - sums.kl) / n;
  f.recon_per_token = sums.recon / ntok, f.kl_per_token = sums.kl / ntok;
  f.elbo_per_token = (sums.recon - sums.kl) / ntok;
  f.ppl_bound = std::exp(-f.elbo_per_token);
  f.iw = sums.iw / n;
  f.ppl_iw = std::exp(-sums.iw / ntok);
  f.kl_per_dim = sums.kl_dim;
  for (double& v : f.kl_per_dim) v /= n;
  f.active_units = count_active_units(sums.mu.data(), sums.sentences, Z, opt.au_threshold, &f.mu_variance);
  return f;
}

}  // namespace lava
