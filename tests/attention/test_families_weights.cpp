// The deterministic weights of the wider family (structured CRF, sigmoid, Dirichlet prior mean) against brute force
// in double, values and gradients, and the structured weights' range safety. (tests/attention/test_families_cli.cpp
// runs the variants through the binary; tests/attention/test_families_objective.cpp checks their objectives.)
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attention/attention_weights.hpp"
#include "core/check.hpp"

using namespace lava;

namespace {
using Vec = std::vector<double>;
}  // namespace

TEST_CASE("families: structured, sigmoid and Dirichlet-mean weights equal brute force (values and gradients)") {
  constexpr int B = 3, T = 2, S = 5, N = B * T;
  const int len[B] = {5, 3, 1};
  const double pair[2][2] = {{0.3, -0.7}, {-1.1, 0.9}};  // b(z_i, z_i+1), asymmetric
  VariantConfig cfg;
  cfg.crf_lambda = 1.7f;
  ParamStore<float> ps;
  const int sc = ps.add("scores", Shape{B, T, S});
  VariantParams vp(ps, parse_attn_variant("structured", "nmt"), cfg, 3);
  ps.init_uniform(2.f, 5);
  for (int k = 0; k < N * S; ++k)
    if (k % S >= len[k / S / T]) ps.val(sc)[k] = kMaskedLogit;
  std::memcpy(ps.val(ps.find("attn/crf/pairwise")), std::vector<float>{0.3f, -0.7f, -1.1f, 0.9f}.data(), 16);
  std::vector<float> r(N * S);  // a fixed random readout J = Σ r·w for the gradients
  for (size_t k = 0; k < r.size(); ++k) r[k] = float(std::sin(1.7 * double(k) + 0.3));

  // λ p(z_i = 1) / Σ_j p(z_j = 1) by enumerating all 2^L chains of row n; pairwise b, scores s (double), unaries
  // θ_i(1) = 30 tanh(s_i / 30) (attention_weights.hpp's bound).
  auto brute = [&](const Vec& s, const double b[2][2], int n) {
    const int L = len[n / T];
    Vec p1(S, 0.0), w(S, 0.0);
    double Z = 0;
    for (int z = 0; z < (1 << L); ++z) {
      double score = 0;
      for (int i = 0; i < L; ++i) score += ((z >> i) & 1) * 30 * std::tanh(s[size_t(n * S + i)] / 30);
      for (int i = 0; i + 1 < L; ++i) score += b[(z >> i) & 1][(z >> (i + 1)) & 1];
      Z += std::exp(score);
      for (int i = 0; i < L; ++i) p1[size_t(i)] += ((z >> i) & 1) * std::exp(score);
    }
    double total = 0;
    for (int i = 0; i < L; ++i) total += p1[size_t(i)] / Z;
    for (int i = 0; i < L; ++i) w[size_t(i)] = 1.7 * p1[size_t(i)] / Z / total;
    return w;
  };
  Vec s0(ps.val(sc), ps.val(sc) + N * S);
  auto J = [&](const Vec& s, const double b[2][2]) {
    double j = 0;
    for (int n = 0; n < N; ++n) {
      const Vec w = brute(s, b, n);
      for (int i = 0; i < S; ++i) j += r[size_t(n * S + i)] * w[size_t(i)];
    }
    return j;
  };

  Tape<float> tape;
  Ctx c{tape, ps, true, CounterRng(1, 1), 0.f};
  AttentionDists d;
  d.scores = c.p(sc), d.log_prior = log_softmax(d.scores, -1), d.extra = vp.vars(c);
  Var<float> w = attention_weights(parse_attn_variant("structured", "nmt"), d);
  for (int n = 0; n < N; ++n) {
    const Vec ref = brute(s0, pair, n);
    for (int i = 0; i < S; ++i) {
      if (i >= len[n / T]) CHECK(w.val()[n * S + i] == 0.f);  // padding: exactly 0
      CHECK(w.val()[n * S + i] == doctest::Approx(ref[size_t(i)]).epsilon(1e-5));
    }
  }
  ps.zero_grad();
  tape.backward(sum_all(mul(w, tape.input(Shape{B, T, S}, r.data()))));
  const double h = 1e-5;
  for (int k = 0; k < N * S; ++k) {  // dJ/ds by central differences of the brute force (0 at padding)
    Vec sp = s0, sm = s0;
    sp[size_t(k)] += h, sm[size_t(k)] -= h;
    const double fd = k % S >= len[k / S / T] ? 0.0 : (J(sp, pair) - J(sm, pair)) / (2 * h);
    CHECK(ps.grad(sc)[k] == doctest::Approx(fd).epsilon(1e-3).scale(1e-3));
  }
  for (int k = 0; k < 4; ++k) {  // dJ/db
    double bp[2][2], bm[2][2];
    std::memcpy(bp, pair, sizeof bp), std::memcpy(bm, pair, sizeof bm);
    bp[k / 2][k % 2] += h, bm[k / 2][k % 2] -= h;
    CHECK(ps.grad(ps.find("attn/crf/pairwise"))[k] == doctest::Approx((J(s0, bp) - J(s0, bm)) / (2 * h)).epsilon(1e-3));
  }

  Var<float> sig = attention_weights(parse_attn_variant("sigmoid", "nmt"), d);
  for (int k = 0; k < N * S; ++k)
    CHECK(sig.val()[k] == doctest::Approx(k % S >= len[k / S / T] ? 0.0 : 1 / (1 + std::exp(-s0[size_t(k)]))));
  for (const char* transform : {"exp", "softplus"}) {
    CAPTURE(transform);
    d.extra.cfg.alpha_transform = transform;
    Var<float> mean = attention_weights(parse_attn_variant("var-dirichlet", "nmt"), d);
    for (int n = 0; n < N; ++n) {
      Vec a(S);
      double a0 = 0;
      for (int i = 0; i < S; ++i) {
        const double x = s0[size_t(n * S + i)];
        a0 += a[size_t(i)] = transform[0] == 's' ? std::log1p(std::exp(x)) + std::exp(-10.0) : std::exp(10 * std::tanh(x / 10));
      }
      for (int i = 0; i < S; ++i) CHECK(mean.val()[n * S + i] == doctest::Approx(a[size_t(i)] / a0).epsilon(1e-5));
    }
  }
  for (AttnVariant v : {parse_attn_variant("gauss-ctx", "nmt"), parse_attn_variant("bam-weibull", "nmt"),
                        parse_attn_variant("bam-lognormal", "nmt")}) {
    Var<float> p = attention_weights(v, d);  // the prior's mean
    for (int k = 0; k < N * S; ++k) CHECK(p.val()[k] == doctest::Approx(std::exp(d.log_prior.val()[k])));
  }
}

TEST_CASE("families: structured weights stay finite when every score is far below float's exp range") {
  // Scores near −120: unbounded, p(z_i = 1) ≈ e^{s_i} ≈ 1e-52 would underflow in float and λ/Σp overflow. The
  // unaries are bounded to 30 tanh(s/30) ≈ −30, so the weights are the brute force of those bounded unaries.
  ParamStore<float> ps;
  const int sc = ps.add("scores", Shape{1, 1, 4});
  VariantConfig cfg;
  VariantParams vp(ps, parse_attn_variant("structured", "nmt"), cfg, 3);  // pairwise scores 0, λ = 2
  const double s[4] = {-120, -118.5, -121, -119};
  for (int i = 0; i < 4; ++i) ps.val(sc)[i] = float(s[i]);
  Tape<float> tape;
  Ctx c{tape, ps, true, CounterRng(1, 1), 0.f};
  AttentionDists d;
  d.scores = c.p(sc), d.log_prior = log_softmax(d.scores, -1), d.extra = vp.vars(c);
  Var<float> w = attention_weights(parse_attn_variant("structured", "nmt"), d);
  double p1[4] = {}, total = 0, Z = 0;  // brute force over the 16 chains
  for (int z = 0; z < 16; ++z) {
    double score = 0;
    for (int i = 0; i < 4; ++i) score += ((z >> i) & 1) * 30 * std::tanh(s[i] / 30);
    Z += std::exp(score);
    for (int i = 0; i < 4; ++i) p1[i] += ((z >> i) & 1) * std::exp(score);
  }
  for (double x : p1) total += x / Z;
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    CHECK(std::isfinite(w.val()[i]));
    CHECK(w.val()[i] == doctest::Approx(2 * p1[i] / Z / total).epsilon(1e-4));
    sum += w.val()[i];
  }
  CHECK(sum == doctest::Approx(2.0).epsilon(1e-5));
}
