// The captioner (tasks/caption): its exact likelihood and Jensen bound recomputed with plain loops in double from
// the parameters; the doubly stochastic penalty's gradient against finite differences in double.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attention/doubly_stochastic.hpp"
#include "autodiff/gradcheck.hpp"
#include "core/rng.hpp"
#include "tasks/caption/model.hpp"

using namespace lava;

namespace {

constexpr int V = 11, D = 5, E = 4, H = 5, Ha = 6, A = 3, S = kSceneRegions;

CaptionModel tiny_model(AttnVariant v) {
  CaptionConfig cfg;
  cfg.attn = v, cfg.words = V, cfg.feature_dim = D, cfg.emb = E, cfg.hidden = H, cfg.annotation = Ha;
  cfg.attn_size = A, cfg.dropout = 0.3f;
  CaptionModel m(cfg);
  m.ps.init_uniform(0.6f, 3);
  return m;
}

CaptionBatch tiny_batch() {
  CaptionBatch b;
  b.B = 2, b.T = 4, b.D = D;
  CounterRng rng(5, 9);
  b.features.resize(size_t(b.B) * S * D);
  for (size_t i = 0; i < b.features.size(); ++i) b.features[i] = float(rng.uniform(i));
  b.tgt_in = {2, 5, 7, 9, 2, 4, 0, 0};
  b.tgt_out = {5, 7, 9, 3, 4, 3, 0, 0};
  b.mask = {1, 1, 1, 1, 1, 1, 0, 0};
  b.region.assign(8, -1);
  b.lengths = {4, 2};
  return b;
}

// y = x W (+ b) in double for W (in, out) row-major.
std::vector<double> affine(const std::vector<double>& x, const float* W, const float* b, int in, int out) {
  std::vector<double> y(size_t(out), 0.0);
  for (int o = 0; o < out; ++o) {
    double s = b ? double(b[o]) : 0.0;
    for (int i = 0; i < in; ++i) s += x[size_t(i)] * double(W[size_t(i) * out + o]);
    y[size_t(o)] = s;
  }
  return y;
}

double sigm(double x) { return 1 / (1 + std::exp(-x)); }

struct Reference {
  double log_lik = 0, jensen = 0;  // Σ_t log Σ_i α_ti f_i(y_t) and Σ_t Σ_i α_ti log f_i(y_t) (latent)
  double soft = 0;                 // Σ_t log f(y_t | Σ_i α_ti a_i)
};

// The model's forward written out with plain loops in double, parameters read by name.
Reference reference(CaptionModel& m, const CaptionBatch& b) {
  auto P = [&](const char* name) {
    const int id = m.ps.find(name);
    REQUIRE(id >= 0);
    return m.ps.val(id);
  };
  Reference out;
  for (int n = 0; n < b.B; ++n) {
    std::vector<std::vector<double>> a(S), key(S), mem(S);
    std::vector<double> mean(Ha, 0.0);
    for (int i = 0; i < S; ++i) {
      std::vector<double> r(b.features.begin() + (size_t(n) * S + i) * D, b.features.begin() + (size_t(n) * S + i + 1) * D);
      a[size_t(i)] = affine(r, P("region/W"), P("region/b"), D, Ha);
      for (double& x : a[size_t(i)]) x = std::max(0.0, x);
      for (int k = 0; k < Ha; ++k) mean[size_t(k)] += a[size_t(i)][size_t(k)] / S;
      key[size_t(i)] = affine(a[size_t(i)], P("attention/W_k/W"), P("attention/W_k/b"), Ha, A);
      mem[size_t(i)] = affine(a[size_t(i)], P("output/L_z/W"), nullptr, Ha, E);
    }
    std::vector<double> h = affine(mean, P("init/h/W"), P("init/h/b"), Ha, H);
    std::vector<double> c = affine(mean, P("init/c/W"), P("init/c/b"), Ha, H);
    for (double& x : h) x = std::tanh(x);
    for (double& x : c) x = std::tanh(x);
    for (int t = 0; t < b.T; ++t) {
      if (b.mask[size_t(n) * b.T + t] == 0.f) break;
      const int prev = b.tgt_in[size_t(n) * b.T + t], y = b.tgt_out[size_t(n) * b.T + t];
      // α_t from h_{t−1}
      const std::vector<double> q = affine(h, P("attention/W_q/W"), nullptr, H, A);
      std::vector<double> alpha(S);
      double mx = -1e300;
      for (int i = 0; i < S; ++i) {
        double s = 0;
        for (int k = 0; k < A; ++k) s += double(P("attention/v")[k]) * std::tanh(q[size_t(k)] + key[size_t(i)][size_t(k)]);
        alpha[size_t(i)] = s, mx = std::max(mx, s);
      }
      double z = 0;
      for (double& x : alpha) z += (x = std::exp(x - mx));
      for (double& x : alpha) x /= z;
      const double beta = sigm(affine(h, P("attention/beta/W"), P("attention/beta/b"), H, 1)[0]);
      std::vector<double> ctx(Ha, 0.0);
      for (int i = 0; i < S; ++i)
        for (int k = 0; k < Ha; ++k) ctx[size_t(k)] += beta * alpha[size_t(i)] * a[size_t(i)][size_t(k)];
      std::vector<double> e(P("word_emb") + size_t(prev) * E, P("word_emb") + size_t(prev + 1) * E);
      std::vector<double> g = affine(e, P("lstm/W_in"), P("lstm/b"), E, 4 * H);
      const std::vector<double> gc = affine(ctx, P("lstm/W_ctx"), nullptr, Ha, 4 * H);
      const std::vector<double> gh = affine(h, P("lstm/W_hh"), nullptr, H, 4 * H);
      for (int k = 0; k < 4 * H; ++k) g[size_t(k)] += gc[size_t(k)] + gh[size_t(k)];
      for (int k = 0; k < H; ++k) {  // gates [i | f | g | o]
        const double ig = sigm(g[size_t(k)]), fg = sigm(g[size_t(H + k)]), gg = std::tanh(g[size_t(2 * H + k)]);
        const double og = sigm(g[size_t(3 * H + k)]);
        c[size_t(k)] = fg * c[size_t(k)] + ig * gg;
        h[size_t(k)] = og * std::tanh(c[size_t(k)]);
      }
      std::vector<double> query = affine(h, P("output/L_h/W"), P("output/L_h/b"), H, E);
      for (int k = 0; k < E; ++k) query[size_t(k)] += e[size_t(k)];
      // log f(y | u) = log softmax(L_o tanh(query + u) + b_o)_y
      auto log_f = [&](const std::vector<double>& u) {
        std::vector<double> o(E);
        for (int k = 0; k < E; ++k) o[size_t(k)] = std::tanh(query[size_t(k)] + u[size_t(k)]);
        const std::vector<double> logits = affine(o, P("output/L_o/W"), P("output/L_o/b"), E, V);
        double m2 = -1e300, zz = 0;
        for (double l : logits) m2 = std::max(m2, l);
        for (double l : logits) zz += std::exp(l - m2);
        return logits[size_t(y)] - m2 - std::log(zz);
      };
      double marginal = 0;
      std::vector<double> soft_u(E, 0.0);
      for (int i = 0; i < S; ++i) {
        const double lf = log_f(mem[size_t(i)]);
        marginal += alpha[size_t(i)] * std::exp(lf);
        out.jensen += alpha[size_t(i)] * lf;
        for (int k = 0; k < E; ++k) soft_u[size_t(k)] += alpha[size_t(i)] * mem[size_t(i)][size_t(k)];
      }
      out.log_lik += std::log(marginal);
      out.soft += log_f(soft_u);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("caption: exact NLL and Jensen bound recomputed with plain loops in double") {
  for (AttnVariant v : {parse_attn_variant("marginal", "nmt"), parse_attn_variant("hard-enum", "nmt"),
                        parse_attn_variant("soft", "nmt")}) {
    CAPTURE(variant_info(v).name);
    CaptionModel m = tiny_model(v);
    const CaptionBatch b = tiny_batch();
    Tape<float> tape;
    Ctx c{tape, m.ps, false, CounterRng(0, 0), 0.f};
    const AttentionEvalSums got = m.evaluate(c, b);
    const Reference ref = reference(m, b);
    CHECK(got.tokens == 6);
    if (v == parse_attn_variant("soft", "nmt")) {
      CHECK(got.log_lik == doctest::Approx(ref.soft).epsilon(1e-5));
    } else {
      CHECK(got.log_lik == doctest::Approx(ref.log_lik).epsilon(1e-5));
      CHECK(got.elbo == doctest::Approx(ref.jensen).epsilon(1e-5));
      CHECK(ref.log_lik > ref.jensen);  // Jensen: the bound is strictly below for a non-degenerate α
    }
  }
}

TEST_CASE("caption: the training objective of marginal is the exact log-likelihood it evaluates") {
  CaptionModel m = tiny_model(parse_attn_variant("marginal", "nmt"));
  const CaptionBatch b = tiny_batch();
  Tape<float> tape;
  Ctx c{tape, m.ps, false, CounterRng(0, 0), 0.f};
  CaptionObjective opt;
  opt.alpha_reg = 0;
  const CaptionTerms t = m.objective(c, b, opt);
  CHECK(t.objective.item() == doctest::Approx(reference(m, b).log_lik).epsilon(1e-5));
}

TEST_CASE("caption: the doubly stochastic penalty against finite differences in double") {
  const std::vector<double> mask = {1, 1, 0, 1, 1, 1};  // (B = 2, T = 3), one padded word
  GradCase gc;
  gc.op = "doubly_stochastic_penalty";
  gc.shape = "(2,3,4)";
  gc.inputs = {Shape{2, 3, 4}};
  gc.lo = 0.0, gc.hi = 0.6;
  gc.build = [&](const std::vector<Var<double>>& x) {
    std::vector<double> m(24);
    for (size_t n = 0; n < 6; ++n)
      for (size_t i = 0; i < 4; ++i) m[n * 4 + i] = mask[n];
    return std::vector<Var<double>>{doubly_stochastic_penalty(x[0], x[0].tape->input(Shape{2, 3, 4}, m.data()))};
  };
  const GradCheckResult r = gradcheck(gc, GradCheckOptions{});
  CAPTURE(r.max_rel_err);
  CHECK(r.pass);
  CHECK(r.checked == 24);
  // and its value: Σ_b Σ_i (1 − Σ_t m α)² at α = 0.25 everywhere: b = 0 attends 0.5, b = 1 0.75 per position
  Tape<double> tape;
  std::vector<double> a(24, 0.25), m(24);
  for (size_t n = 0; n < 6; ++n)
    for (size_t i = 0; i < 4; ++i) m[n * 4 + i] = mask[n];
  const double p = doubly_stochastic_penalty(tape.input(Shape{2, 3, 4}, a.data()), tape.input(Shape{2, 3, 4}, m.data())).item();
  CHECK(p == doctest::Approx(4 * 0.25 + 4 * 0.0625));
}
