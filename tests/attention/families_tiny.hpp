#pragma once
// The tiny attention problem of the families tests (tests/attention/test_families.cpp,
// tests/attention/test_families_objective.cpp): two batch rows of queries over a short memory with every input a
// parameter, and its output head, prior and posterior rows recomputed in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attention/variants/continuous.hpp"

namespace families_test {

using namespace lava;

using Vec = std::vector<double>;

// Two batch rows of T = 2 queries over S = 4 positions (row 1 has 2 real ones), head width 3, 5 labels; the
// fourth query is padding (token mask 0). Everything is a parameter, so gradients reach every input.
struct Tiny {
  static constexpr int B = 2, T = 2, S = 4, Hd = 3, V = 5, N = B * T;
  static constexpr int len[B] = {4, 2};
  static constexpr float mask[N] = {1, 1, 1, 0};
  static constexpr int32_t y[N] = {1, 3, 0, 4};
  VariantConfig cfg;
  bool relu;  // the head's activation: tanh, or relu (make_probe)
  ParamStore<float> ps;
  int query, memory, W_gen, b_gen, scores, q_scores;
  VariantParams vp;

  Tiny(AttnVariant v, const VariantConfig& c, uint64_t seed) : cfg(c), relu(false) {
    query = ps.add("query", Shape{B, T, Hd});
    memory = ps.add("memory", Shape{B, S, Hd});
    W_gen = ps.add("W_gen", Shape{Hd, V});
    b_gen = ps.add("b_gen", Shape{V});
    scores = ps.add("scores", Shape{B, T, S});
    q_scores = ps.add("q_scores", Shape{B, T, S});
    vp = VariantParams(ps, v, cfg, Hd);
    ps.init_uniform(0.8f, seed);
    float *s = ps.val(scores), *qs = ps.val(q_scores);
    for (int k = 0; k < N * S; ++k) {
      qs[k] = s[k] + 0.3f * qs[k];  // q near the prior
      if (k % S >= len[k / S / T]) s[k] = qs[k] = kMaskedLogit;
    }
  }
  const float* P(int id) const { return ps.values() + ps.params()[size_t(id)].offset; }
  const float* P(const char* name) const { return P(ps.find(name)); }

  struct Built {
    OutputHead head;
    AttentionDists d;
  };
  Built build(Ctx& c) {
    Built r;
    r.head = OutputHead{c.p(query), c.p(memory), c.p(W_gen), c.p(b_gen), relu};
    r.d.scores = c.p(scores), r.d.log_prior = log_softmax(r.d.scores, -1);
    r.d.q_scores = c.p(q_scores), r.d.log_q = log_softmax(r.d.q_scores, -1);
    r.d.extra = vp.vars(c);
    return r;
  }

  // log f(x, context)_y of query n, and the context of weights w over the memory of n's batch row.
  double log_f(int n, const Vec& ctx) const {
    const float *A = P(query) + n * Hd, *W = P(W_gen);
    double logit[V], m = -INFINITY, z = 0;
    for (int v = 0; v < V; ++v) logit[v] = P(b_gen)[v];
    for (int h = 0; h < Hd; ++h) {
      const double a = double(A[h]) + ctx[size_t(h)], o = relu ? std::max(a, 0.0) : std::tanh(a);
      for (int v = 0; v < V; ++v) logit[v] += o * W[h * V + v];
    }
    for (double l : logit) m = std::max(m, l);
    for (double l : logit) z += std::exp(l - m);
    return logit[y[n]] - m - std::log(z);
  }
  Vec context(int n, const Vec& w) const {
    const float* U = P(memory) + n / T * S * Hd;
    Vec ctx(Hd, 0.0);
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < Hd; ++h) ctx[size_t(h)] += w[size_t(s)] * U[s * Hd + h];
    return ctx;
  }
  double log_f_at(int n, int s) const {
    Vec e(S, 0.0);
    e[size_t(s)] = 1;
    return log_f(n, context(n, e));
  }
  // softmax over the real positions of row n of scores (p) or q_scores (q); 0 at padding.
  Vec softmax_row(int id, int n) const {
    const int L = len[n / T];
    Vec p(S, 0.0);
    double z = 0;
    for (int s = 0; s < L; ++s) z += p[size_t(s)] = std::exp(double(P(id)[n * S + s]));
    for (int s = 0; s < L; ++s) p[size_t(s)] /= z;
    return p;
  }
  // BAM's contextual prior π = softmax_i (w2ᵀ relu(W1ᵀ U_i + b1) + b2) over the real positions of n's row.
  Vec contextual_pi(int n) const {
    const int b = n / T, L = len[b];
    Vec pi(S, 0.0);
    double z = 0;
    for (int s = 0; s < L; ++s) {
      double g = P("attn/prior/b2")[0];
      for (int j = 0; j < 10; ++j) {
        double a = P("attn/prior/b1")[j];
        for (int h = 0; h < Hd; ++h) a += double(P(memory)[(b * S + s) * Hd + h]) * P("attn/prior/W1")[h * 10 + j];
        g += std::max(a, 0.0) * P("attn/prior/w2")[j];
      }
      z += pi[size_t(s)] = std::exp(g);
    }
    for (int s = 0; s < L; ++s) pi[size_t(s)] /= z;
    return pi;
  }
  Vec dirichlet_alpha_row(int id, int n) const {
    Vec a(S);
    for (int s = 0; s < S; ++s) {
      const double x = P(id)[n * S + s];
      a[size_t(s)] = cfg.alpha_transform == "softplus" ? std::log1p(std::exp(x)) + std::exp(-10.0)
                                                       : std::exp(10 * std::tanh(x / 10));
    }
    return a;
  }
};

}  // namespace families_test
