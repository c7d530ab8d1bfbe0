#pragma once
// A plain-loop reference of the sequence VAE (tasks/seqvae/model.hpp) in double, for
// tests/tasks/seqvae/test_seqvae.cpp: the BiLSTM encoder, the posterior, z = μ + σε for given ε, the LSTM decoder
// with soft attention (additive or multiplicative) or none, and the output softmax, one sentence at a time with no
// batching, padding or fused kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "data/vocab.hpp"
#include "tasks/seqvae/model.hpp"

namespace seqvae_test {

using namespace lava;


struct Ref {
  const SeqVae& m;
  std::vector<double> p(const std::string& name) const {
    const int id = m.ps.find(name);
    REQUIRE_MESSAGE(id >= 0, name);
    const auto& P = m.ps.params()[size_t(id)];
    const float* v = m.ps.values() + P.offset;
    return std::vector<double>(v, v + P.shape.numel());
  }
  static double sig(double x) { return 1 / (1 + std::exp(-x)); }
  // One LSTM step (PyTorch gate order i, f, g, o): W_ih (in, 4h), W_hh (h, 4h), b (4h).
  static void lstm_step(const std::string& n, const Ref& r, const std::vector<double>& x, std::vector<double>& h,
                        std::vector<double>& c) {
    const std::vector<double> Wih = r.p(n + "/W_ih"), Whh = r.p(n + "/W_hh"), b = r.p(n + "/b");
    const size_t H = h.size(), in = x.size();
    std::vector<double> a(4 * H);
    for (size_t j = 0; j < 4 * H; ++j) {
      a[j] = b[j];
      for (size_t k = 0; k < in; ++k) a[j] += x[k] * Wih[k * 4 * H + j];
      for (size_t k = 0; k < H; ++k) a[j] += h[k] * Whh[k * 4 * H + j];
    }
    for (size_t j = 0; j < H; ++j) {
      c[j] = sig(a[H + j]) * c[j] + sig(a[j]) * std::tanh(a[2 * H + j]);
      h[j] = sig(a[3 * H + j]) * std::tanh(c[j]);
    }
  }
  // x W + b for x (in), W (in, out)
  std::vector<double> linear(const std::string& n, const std::vector<double>& x, bool bias = true) const {
    const std::vector<double> W = p(n + "/W");
    const size_t out = W.size() / x.size();
    std::vector<double> y(out, 0.0);
    if (bias) y = p(n + "/b");
    for (size_t j = 0; j < out; ++j)
      for (size_t k = 0; k < x.size(); ++k) y[j] += x[k] * W[k * out + j];
    return y;
  }

  struct Sentence {
    std::vector<double> mu, sigma, z, token_lp;  // token_lp: log p of X_1..X_n, <eos>
    double kl = 0;
  };
  // Sentence `words` with noise ε (Z values).
  Sentence run(const std::vector<int32_t>& words, const std::vector<double>& eps) const {
    const SeqVaeConfig& cfg = m.config();
    const int E = cfg.emb, H = cfg.hidden, Z = cfg.latent, n = int(words.size());
    const std::vector<double> emb = p("emb");
    auto embed = [&](int id) { return std::vector<double>(emb.begin() + id * E, emb.begin() + (id + 1) * E); };
    // BiLSTM memory m_t = [→h_t ; ←h_t]
    std::vector<std::vector<double>> mem(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(H)));
    std::vector<double> h(size_t(H / 2), 0.0), c(size_t(H / 2), 0.0);
    for (int t = 0; t < n; ++t) {
      lstm_step("encoder/l0/fwd", *this, embed(words[size_t(t)]), h, c);
      std::copy(h.begin(), h.end(), mem[size_t(t)].begin());
    }
    std::fill(h.begin(), h.end(), 0.0), std::fill(c.begin(), c.end(), 0.0);
    for (int t = n - 1; t >= 0; --t) {
      lstm_step("encoder/l0/bwd", *this, embed(words[size_t(t)]), h, c);
      std::copy(h.begin(), h.end(), mem[size_t(t)].begin() + H / 2);
    }
    std::vector<double> u(static_cast<size_t>(H));
    std::copy_n(mem[size_t(n - 1)].begin(), H / 2, u.begin());
    std::copy_n(mem[0].begin() + H / 2, H / 2, u.begin() + H / 2);
    Sentence s;
    s.mu = linear("posterior/mu", u);
    s.sigma = linear("posterior/log_sigma", u);
    for (int d = 0; d < Z; ++d) {
      s.sigma[size_t(d)] = std::exp(s.sigma[size_t(d)]);
      s.z.push_back(s.mu[size_t(d)] + s.sigma[size_t(d)] * eps[size_t(d)]);
      s.kl += -std::log(s.sigma[size_t(d)]) + 0.5 * (s.sigma[size_t(d)] * s.sigma[size_t(d)] + s.mu[size_t(d)] * s.mu[size_t(d)]) - 0.5;
    }
    // Decoder: input [emb(prev); z], zero initial state; attention over mem; output softmax.
    std::vector<double> hd(size_t(H), 0.0), cd(size_t(H), 0.0);
    for (int t = 0; t <= n; ++t) {
      std::vector<double> x = embed(t == 0 ? Vocab::kBos : words[size_t(t - 1)]);
      x.insert(x.end(), s.z.begin(), s.z.end());
      lstm_step("decoder/l0", *this, x, hd, cd);
      std::vector<double> pre = linear("out/h", hd);
      if (cfg.dec_attn == lava::DecoderAttention::soft) {
        std::vector<double> score(static_cast<size_t>(n));
        if (cfg.score == lava::SeqVaeScore::additive) {
          const std::vector<double> Wq = p("score/W_q"), Wk = p("score/W_k"), v = p("score/v");
          const int A = cfg.attn_size;
          for (int i = 0; i < n; ++i)
            for (int a = 0; a < A; ++a) {
              double s_a = 0;
              for (int k = 0; k < H; ++k) s_a += hd[size_t(k)] * Wq[size_t(k * A + a)] + mem[size_t(i)][size_t(k)] * Wk[size_t(k * A + a)];
              score[size_t(i)] += v[size_t(a)] * std::tanh(s_a);
            }
        } else {
          const std::vector<double> W = p("score/W");
          for (int i = 0; i < n; ++i)
            for (int k = 0; k < H; ++k)
              for (int l = 0; l < H; ++l) score[size_t(i)] += hd[size_t(k)] * W[size_t(k * H + l)] * mem[size_t(i)][size_t(l)];
        }
        double mx = -1e300, zs = 0;
        for (double v : score) mx = std::max(mx, v);
        for (double v : score) zs += std::exp(v - mx);
        std::vector<double> ctx(size_t(H), 0.0);
        for (int i = 0; i < n; ++i)
          for (int k = 0; k < H; ++k) ctx[size_t(k)] += std::exp(score[size_t(i)] - mx) / zs * mem[size_t(i)][size_t(k)];
        const std::vector<double> cc = linear("out/c", ctx, false);
        for (int k = 0; k < H; ++k) pre[size_t(k)] += cc[size_t(k)];
      }
      for (double& v : pre) v = std::tanh(v);
      const std::vector<double> logits = linear("generator", pre);
      double mx = -1e300, zs = 0;
      for (double v : logits) mx = std::max(mx, v);
      for (double v : logits) zs += std::exp(v - mx);
      const int y = t < n ? words[size_t(t)] : Vocab::kEos;
      s.token_lp.push_back(logits[size_t(y)] - mx - std::log(zs));
    }
    return s;
  }
};

}  // namespace seqvae_test
