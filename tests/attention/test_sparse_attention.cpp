// The sparse latent alignments (attention/variants/sparse.cpp, src/method.md §2.4): sparse-marginal and var-sparse
// against a brute-force evaluation in double on the tiny attention problem (tests/attention/families_tiny.hpp), with sparsemax
// and 1.5-entmax found by bisection on their threshold: the training objective, its gradient (central differences of
// the brute-force objective), the support sizes, and every evaluation figure; sparse-marginal's marginal against the
// dense enumerated one with the sparse weights. Then the translation model end to end on `lava data synth` data: a
// few Adam steps, the objective against the exact evaluation, the KL-gap identity, the same bits with 1 and 2
// threads, and `lava train` and `lava eval` reporting the support with every other figure.
#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "attention/attention_variant.hpp"
#include "support/cli_runner.hpp"
#include "core/json.hpp"
#include "attention/objective_parts.hpp"
#include "data/synth_task.hpp"
#include "families_tiny.hpp"
#include "nn/optim.hpp"
#include "tasks/nmt/eval.hpp"
#include "tasks/nmt/seq2seq.hpp"

using namespace lava;
using families_test::Tiny;
using families_test::Vec;

namespace {

// α-entmax of z over its first L entries (0 beyond), by bisection on τ in Σ_i [(α − 1) z_i − τ]_+^{1/(α−1)} = 1.
Vec entmax_bisection(const float* z, int L, int S, double alpha) {
  double top = -INFINITY;
  for (int i = 0; i < L; ++i) top = std::max(top, (alpha - 1) * z[i]);
  double lo = top - 1, hi = top;
  auto mass = [&](double tau) {
    double m = 0;
    for (int i = 0; i < L; ++i) m += std::pow(std::max((alpha - 1) * z[i] - tau, 0.0), 1 / (alpha - 1));
    return m;
  };
  for (int it = 0; it < 200; ++it) (mass((lo + hi) / 2) > 1 ? lo : hi) = (lo + hi) / 2;
  const double tau = (lo + hi) / 2;
  Vec p(size_t(S), 0.0);
  for (int i = 0; i < L; ++i) p[size_t(i)] = std::pow(std::max((alpha - 1) * z[i] - tau, 0.0), 1 / (alpha - 1));
  return p;
}

// Per real token, from the tiny problem's parameters in double: the figures of either variant.
struct Brute {
  double objective = 0;  // sparse-marginal: log Σ_{supp p} p_i f_i; var-sparse: Σ_{supp q} q_i (log f_i − log q_i + log p_i)
  double log_lik = 0;    // the exact marginal: under the sparse p (sparse-marginal), the softmax p (var-sparse)
  double elbo = 0, kl = 0, kl_posterior = 0, entropy = 0, q_entropy = 0;
  double support = 0, real_positions = 0;
};

Brute brute(const Tiny& t, bool var, double alpha) {
  Brute r;
  for (int n = 0; n < Tiny::N; ++n) {
    if (Tiny::mask[n] == 0) continue;
    const int L = Tiny::len[n / Tiny::T];
    const Vec sparse = entmax_bisection(t.P(var ? t.q_scores : t.scores) + n * Tiny::S, L, Tiny::S, alpha);
    const Vec p = var ? t.softmax_row(t.scores, n) : sparse, &q = var ? sparse : p;
    Vec lf(Tiny::S);
    double marginal = 0;
    for (int s = 0; s < L; ++s) marginal += p[size_t(s)] * std::exp(lf[size_t(s)] = t.log_f_at(n, s));
    const double log_marginal = std::log(marginal);
    r.log_lik += log_marginal;
    r.real_positions += L;
    for (int s = 0; s < L; ++s) {
      if (p[size_t(s)] > 0) r.entropy -= p[size_t(s)] * std::log(p[size_t(s)]);
      const double qs = q[size_t(s)];
      if (qs == 0) continue;
      r.support += 1;
      const double lp = std::log(p[size_t(s)]), lq = std::log(qs), post = lp + lf[size_t(s)] - log_marginal;
      r.elbo += qs * (lf[size_t(s)] + lp - lq);
      r.kl += qs * (lq - lp);
      r.q_entropy -= qs * lq;
      r.kl_posterior += qs * (lq - post);
    }
    r.objective = var ? r.elbo : r.log_lik;
  }
  return r;
}

// Scales the real scores so that some positions fall outside the support.
void spread_scores(Tiny& t, float scale) {
  float *s = t.ps.val(t.scores), *qs = t.ps.val(t.q_scores);
  for (int k = 0; k < Tiny::N * Tiny::S; ++k)
    if (s[k] > kMaskedLogit / 2) s[k] *= scale, qs[k] *= scale;
}

struct Run {
  ObjectiveTerms terms;  // its objective Var dies with the tape: read `objective`
  double objective = 0;
  Vec grad;  // every parameter, in ParamStore order
};

Run objective_and_gradient(Tiny& t, AttnVariant v) {
  Tape<float> tape;
  Ctx c{tape, t.ps, true, CounterRng(1, 2), 0.f};
  Tiny::Built b = t.build(c);
  t.ps.zero_grad();
  Run r{attention_objective(c, v, b.head, b.d, Tiny::y, Tiny::mask, ObjectiveOptions{}), 0, {}};
  r.objective = r.terms.objective.item();
  tape.backward(r.terms.objective);
  r.grad.assign(t.ps.grads(), t.ps.grads() + t.ps.size());
  return r;
}

// Central differences of the brute-force objective in each parameter, with the step the float parameter really took.
Vec brute_gradient(Tiny& t, bool var, double alpha) {
  Vec g(t.ps.size());
  for (size_t i = 0; i < t.ps.size(); ++i) {
    float* x = t.ps.values() + i;
    if (*x <= kMaskedLogit / 2) continue;  // padding scores: not a live input
    const float x0 = *x;
    *x = x0 + 1e-3f;
    const double up = brute(t, var, alpha).objective, x_up = *x;
    *x = x0 - 1e-3f;
    const double down = brute(t, var, alpha).objective, x_down = *x;
    *x = x0;
    g[i] = (up - down) / (x_up - x_down);
  }
  return g;
}

AttentionEvalSums evaluation(Tiny& t, AttnVariant v) {
  Tape<float> tape;
  Ctx c{tape, t.ps, false, CounterRng(1, 2), 0.f};
  NoGrad<float> no_grad(tape);
  Tiny::Built b = t.build(c);
  return attention_eval_batch(c, v, b.head, b.d, Tiny::y, Tiny::mask, 0);
}

}  // namespace

TEST_CASE("sparse attention: objective, gradient, support and evaluation against brute force in double") {
  for (const char* name : {"sparse-marginal", "var-sparse"})
    for (float alpha : {2.f, 1.5f}) {
      const AttnVariant v = parse_attn_variant(name, "nmt");
      const bool var = variant_info(v).uses_q;
      CAPTURE(name);
      CAPTURE(alpha);
      VariantConfig cfg;
      cfg.sparse_alpha = alpha;
      Tiny t(v, cfg, 7);
      spread_scores(t, 3.f);
      const Brute want = brute(t, var, alpha);
      REQUIRE(want.support < want.real_positions);  // the sparse distribution has zeros among the real positions
      REQUIRE(want.support > 3);                    // and more than one position somewhere

      const Run run = objective_and_gradient(t, v);
      CHECK(run.terms.value_sum == doctest::Approx(want.objective).epsilon(1e-5));
      CHECK(run.objective == doctest::Approx(want.objective).epsilon(1e-5));
      CHECK(run.terms.support_sum == want.support);  // the count of nonzero weights over real tokens
      if (var) {
        CHECK(run.terms.kl_sum == doctest::Approx(want.kl).epsilon(1e-5));
        CHECK(run.terms.q_entropy_sum == doctest::Approx(want.q_entropy).epsilon(1e-5));
        CHECK(run.terms.prior_entropy_sum == doctest::Approx(want.entropy).epsilon(1e-5));
      }
      const Vec g = brute_gradient(t, var, alpha);
      double norm = 0;
      for (double x : g) norm += x * x;
      REQUIRE(norm > 1e-4);
      for (size_t i = 0; i < g.size(); ++i) {
        CAPTURE(i);
        CHECK(run.grad[i] == doctest::Approx(g[i]).epsilon(2e-3).scale(1e-3 * std::sqrt(norm)));
      }

      const AttentionEvalSums e = evaluation(t, v);
      CHECK(e.tokens == 3);
      CHECK(e.log_lik == doctest::Approx(want.log_lik).epsilon(1e-5));
      CHECK(e.elbo == doctest::Approx(want.elbo).epsilon(1e-5));
      CHECK(e.kl == doctest::Approx(want.kl).epsilon(1e-5).scale(1e-5));
      CHECK(e.kl_posterior == doctest::Approx(want.kl_posterior).epsilon(1e-5).scale(1e-5));
      CHECK(e.entropy == doctest::Approx(want.entropy).epsilon(1e-5));
      CHECK(e.support == want.support);
      CHECK(e.elbo <= e.log_lik + 1e-5);
      CHECK(std::abs((e.log_lik - e.elbo) - want.kl_posterior) < 1e-4);  // KL gap = KL(q ‖ posterior)
      if (!var) CHECK(e.log_lik == doctest::Approx(run.terms.value_sum).epsilon(1e-6));
      if (var) CHECK(e.elbo == doctest::Approx(run.terms.value_sum).epsilon(1e-6));
    }
}

TEST_CASE("sparse attention: sparse-marginal's log p equals the dense enumerated marginal with the sparse weights") {
  const AttnVariant v = parse_attn_variant("sparse-marginal", "nmt");
  Tiny t(v, VariantConfig{}, 11);
  spread_scores(t, 6.f);
  Tape<float> tape;
  Ctx c{tape, t.ps, false, CounterRng(1, 2), 0.f};
  NoGrad<float> no_grad(tape);
  Tiny::Built b = t.build(c);
  const ObjectiveTerms sparse = attention_objective(c, v, b.head, b.d, Tiny::y, Tiny::mask, ObjectiveOptions{});
  // The dense op over every position, weights w = p (log 0 = −∞ off the support): the same Φ per token.
  Var<float> p = v->weights(b.d);
  int zeros = 0;
  for (int n = 0; n < Tiny::N; ++n)
    for (int s = 0; s < Tiny::len[n / Tiny::T]; ++s) zeros += p.val()[n * Tiny::S + s] == 0.f;
  REQUIRE(zeros > 0);
  std::vector<float> phi(Tiny::N);
  Var<float> dense = b.head.enumerated_objective(c, Tiny::y, log(p), Tiny::mask, EnumeratedObjective::marginal,
                                                 phi.data());
  CHECK(dense.item() == doctest::Approx(sparse.value_sum).epsilon(1e-6));
  CHECK(masked_sum(phi.data(), Tiny::mask, Tiny::N) == doctest::Approx(sparse.value_sum).epsilon(1e-6));
}

namespace {

const std::string& synth_corpus() {
  static const std::string dir = [] {
    std::string d = "/tmp/lava_test_sparse_synth_" + std::to_string(getpid());
    SynthOptions o;
    o.out_dir = d;
    o.train = 64, o.valid = 16, o.test = 16, o.min_len = 3, o.max_len = 9, o.vocab = 30, o.quiet = true;
    build_synth_task(o);
    return d;
  }();
  return dir;
}

ParallelCorpus load_synth() {
  CorpusOptions co;
  co.dir = synth_corpus();
  return load_parallel_corpus(co, VocabOptions{}, VocabOptions{});
}

Seq2SeqConfig synth_config(const ParallelCorpus& c, AttnVariant v, float alpha) {
  Seq2SeqConfig cfg;
  cfg.attn = v;
  cfg.src_vocab = c.src_vocab.size(), cfg.tgt_vocab = c.tgt_vocab.size();
  cfg.emb = 8, cfg.hidden = 12, cfg.attn_size = 6, cfg.inf_hidden = 6;
  cfg.dropout = 0.f;
  cfg.variant.sparse_alpha = alpha;
  return cfg;
}

// `steps` Adam updates on the first 8 pairs (dropout `dropout`): the parameters after them, and the objective's
// value at each step (NaN where the loss was not finite).
std::pair<std::vector<float>, std::vector<double>> train_steps(Seq2Seq& model, const ParallelCorpus& corpus, int steps,
                                                               float dropout) {
  Adam<float> adam;
  adam.lr = 0.01f;
  Tape<float> tape;
  const std::vector<int> idx = {0, 1, 2, 3, 4, 5, 6, 7};
  const Batch batch = make_batch(corpus.train.pairs, idx);
  std::vector<double> values;
  for (int step = 0; step < steps; ++step) {
    tape.reset();
    Ctx c{tape, model.ps, true, CounterRng(3, uint64_t(step)), dropout};
    ObjectiveTerms t = model.objective(c, batch, ObjectiveOptions{});
    Var<float> loss = affine(t.objective, -1.f / float(batch.B), 0.f);
    tape.backward(loss);
    adam.step(model.ps, clip_factor(grad_norm(model.ps), 5.f));
    values.push_back(std::isfinite(loss.item()) ? t.value_sum : NAN);
  }
  return {std::vector<float>(model.ps.values(), model.ps.values() + model.ps.size()), values};
}

}  // namespace

TEST_CASE("sparse attention: the translation model trains on synth data; objective, bounds and support agree") {
  ParallelCorpus corpus = load_synth();
  for (const char* name : {"sparse-marginal", "var-sparse"})
    for (float alpha : {2.f, 1.5f}) {
      const AttnVariant v = parse_attn_variant(name, "nmt");
      CAPTURE(name);
      CAPTURE(alpha);
      Seq2Seq model(synth_config(corpus, v, alpha));
      model.ps.init_uniform(0.3f, 5);
      const std::vector<double> values = train_steps(model, corpus, 20, 0.f).second;
      bool finite = true;
      for (double x : values) finite = finite && std::isfinite(x);
      CHECK(finite);
      CHECK(values.back() > values.front());
      // After training: the objective of a batch equals its exact evaluation (no dropout), the bound holds, the
      // KL gap is KL(q ‖ posterior) per token, and the support is between 1 and the source length.
      const std::vector<int> rows = {0, 1, 2, 3, 4, 5};
      const Batch batch = make_batch(corpus.valid.pairs, rows);
      Tape<float> tape;
      Ctx c{tape, model.ps, false, CounterRng(1, 2), 0.f};
      const ObjectiveTerms t = model.objective(c, batch, ObjectiveOptions{});
      tape.reset();
      const AttentionEvalSums e = model.evaluate(c, batch, 0);
      CHECK(e.tokens == double(batch.target_tokens()));
      CHECK(t.value_sum == doctest::Approx(variant_info(v).uses_q ? e.elbo : e.log_lik).epsilon(1e-5));
      CHECK(t.support_sum == e.support);
      CHECK(e.support >= e.tokens);
      CHECK(e.support <= e.tokens * batch.S);
      CHECK(e.elbo <= e.log_lik + 1e-4);
      CHECK(e.max_identity_error < 1e-4);
      CHECK(std::abs((e.log_lik - e.elbo) - e.kl_posterior) < 1e-4 * e.tokens);
      const NmtEvalFigures f = evaluate_nmt(model, corpus.valid, 8, 0, 1);
      CHECK(f.support >= 1);
      CHECK(std::isfinite(f.nll));
      const NmtEvalFigures k2 = evaluate_nmt(model, corpus.valid, 8, 2, 1);  // K-max applies
      CHECK(std::isfinite(k2.nll));
    }
}

TEST_CASE("sparse attention: training steps are bit-identical with 1 and 2 threads") {
  ParallelCorpus corpus = load_synth();
  for (const char* name : {"sparse-marginal", "var-sparse"}) {
    CAPTURE(name);
    auto run = [&](int threads) {
      omp_set_num_threads(threads);
      Seq2Seq model(synth_config(corpus, parse_attn_variant(name, "nmt"), 2.f));
      model.ps.init_uniform(0.3f, 5);
      return train_steps(model, corpus, 3, 0.3f).first;
    };
    const int saved = omp_get_max_threads();
    const std::vector<float> one = run(1), two = run(2);
    omp_set_num_threads(saved);
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("sparse attention: lava train and lava eval report the support; --alpha takes 2 or 1.5 only") {
  const std::string dir = synth_corpus(), model = dir + "/sparse.safetensors";
  for (const char* name : {"sparse-marginal", "var-sparse"}) {
    CAPTURE(name);
    const std::string sizes = " --emb-size 8 --hidden-size 12 --attn-size 6 --inf-hidden 6 --batch-size 16 ";
    CliResult r = run_lava("train --task nmt --data " + dir + " --attn " + name + " --alpha 1.5" + sizes +
                           "--epochs 2 --save " + model + " --format json -q --threads 1");
    REQUIRE(r.code == 0);
    int epochs = 0;
    for (const std::string& line : lines_of(r.out)) {
      if (line.empty()) continue;
      const JsonValue j = parse_json(line, "stdout");
      if (j.at("event").str() != "epoch") continue;
      ++epochs;
      CHECK(j.at("support").number() >= 1);  // every real token has at least one position, at most its sentence
      CHECK(j.at("support").number() <= 10);
      CHECK(j.at("valid_support").number() >= 1);
      CHECK(j.at("valid_support").number() <= 10);
    }
    CHECK(epochs == 2);
    r = run_lava("eval -q --format json --split test --threads 1 --model " + model + " --data " + dir +
                 " --bleu --beam 2 --gold-align " + dir + "/test.align");
    REQUIRE(r.code == 0);
    const JsonValue row = parse_json(lines_of(r.out).at(0), "stdout");
    for (const char* key : {"nll", "elbo", "kl", "kl_gap", "kl_posterior", "entropy", "bleu", "aer_posterior"})
      CHECK(std::isfinite(row.at(key).number()));
    CHECK(row.at("support").number() >= 1);
    CHECK(std::abs(row.at("kl_gap").number() - row.at("kl_posterior").number()) < 1e-4);
    r = run_lava("eval -q --format json --split test --threads 1 --kmax 1 --model " + model + " --data " + dir);
    REQUIRE(r.code == 0);
    if (std::string(name) == "sparse-marginal")  // K-max keeps one position of the sparse prior
      CHECK(parse_json(lines_of(r.out).at(0), "stdout").at("support").number() == 1);
  }
  const CliResult bad = run_lava("train --task nmt --data " + dir + " --attn sparse-marginal --alpha 1.7 --epochs 1");
  CHECK(bad.code != 0);
  CHECK(bad.err.find("--alpha") != std::string::npos);
  CHECK(bad.err_lines() == 1);
}
