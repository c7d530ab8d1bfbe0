#include "tasks/toy/toy.hpp"

#include <algorithm>
#include <cmath>

#include "autodiff/ops.hpp"
#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/rng.hpp"
#include "nn/optim.hpp"
#include "nn/params.hpp"
#include "core/json.hpp"

namespace lava {

namespace {

// Reads a JSON array of n numbers into out; a JSON matrix of rows×cols when cols > 0.
void read_numbers(const JsonValue& v, std::vector<double>& out, size_t rows, size_t cols, const std::string& what) {
  const auto fail = [&](const JsonValue& at, const std::string& msg) {
    throw input_error(at.file(), at.line(), what + ": " + msg);
  };
  if (!v.is_array()) fail(v, "expected an array");
  if (v.size() != rows) fail(v, fmt::format("expected {} entries, got {}", rows, v.size()));
  for (size_t r = 0; r < rows; ++r) {
    if (cols == 0) {
      out.push_back(v[r].number());
      if (!std::isfinite(out.back())) fail(v[r], "not a finite number");
      continue;
    }
    const JsonValue& row = v[r];
    if (!row.is_array() || row.size() != cols) fail(row, fmt::format("row {} must have {} numbers", r, cols));
    for (size_t c = 0; c < cols; ++c) out.push_back(row[c].number());
  }
}

size_t array_len(const JsonValue& v, const std::string& what) {
  if (!v.is_array() || v.size() == 0) throw input_error(v.file(), v.line(), what + ": expected a non-empty array");
  return v.size();
}

}  // namespace

ToyParams toy_params_from_json(const std::string& path) {
  const JsonValue root = parse_json(read_file(path), path);
  if (!root.is_object()) throw input_error(path, root.line(), "expected a JSON object");
  for (const auto& [key, value] : root.members()) {
    static const char* known[] = {"features", "scores", "W1", "b1", "W2", "b2", "label"};
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return key == k; }) == std::end(known))
      throw input_error(path, value.line(), fmt::format("unknown key \"{}\" (expected features, scores, W1, b1, W2, b2, label)", key));
  }
  ToyParams p;
  const JsonValue& feats = root.at("features");
  p.K = int(array_len(feats, "features"));
  p.D = int(array_len(feats[0], "features[0]"));
  const JsonValue& W1 = root.at("W1");
  p.H = int(array_len(W1, "W1"));
  const JsonValue& W2 = root.at("W2");
  p.C = int(array_len(W2, "W2"));
  read_numbers(feats, p.features, size_t(p.K), size_t(p.D), "features");
  read_numbers(root.at("scores"), p.scores, size_t(p.K), 0, "scores (one per feature row)");
  read_numbers(W1, p.W1, size_t(p.H), size_t(p.D), "W1 (H rows of D)");
  read_numbers(root.at("b1"), p.b1, size_t(p.H), 0, "b1 (one per W1 row)");
  read_numbers(W2, p.W2, size_t(p.C), size_t(p.H), "W2 (C rows of H)");
  read_numbers(root.at("b2"), p.b2, size_t(p.C), 0, "b2 (one per W2 row)");
  const JsonValue& label = root.at("label");
  const int64_t y = label.as_int();
  if (y < 0 || y >= p.C) throw input_error(path, label.line(), fmt::format("label {} outside [0, {})", y, p.C));
  p.label = int(y);
  return p;
}

ToyParams toy_params_random(uint64_t seed, int K, int D, int H, int C) {
  ToyParams p;
  p.K = K, p.D = D, p.H = H, p.C = C;
  auto draw = [&](std::vector<double>& v, size_t n, const char* name, double scale) {
    CounterRng rng(seed, stream_id(name));
    for (size_t i = 0; i < n; ++i) v.push_back(scale * rng.normal(i));
  };
  draw(p.features, size_t(K * D), "toy/features", 1.0);
  draw(p.scores, size_t(K), "toy/scores", 1.0);
  draw(p.W1, size_t(H * D), "toy/W1", 1.5);
  draw(p.b1, size_t(H), "toy/b1", 0.5);
  draw(p.W2, size_t(C * H), "toy/W2", 1.5);
  draw(p.b2, size_t(C), "toy/b2", 0.5);
  p.label = int(CounterRng(seed, stream_id("toy/label")).below(0, uint64_t(C)));
  return p;
}

ToyResult run_toy(const ToyParams& p, const ToyOptions& opt) {
  using V = Var<double>;
  ToyResult r;
  Tape<double> tape;
  const int K = p.K;

  // The generative side needs no gradients: log p, log f(x_i)_y and log f(E_p[x])_y through the engine's ops.
  std::vector<double> log_prior(static_cast<size_t>(K)), log_lik(static_cast<size_t>(K));
  {
    NoGrad<double> no_grad(tape);
    V X = tape.input(Shape{K, p.D}, p.features.data());
    V W1 = tape.input(Shape{p.H, p.D}, p.W1.data()), b1 = tape.input(Shape{p.H}, p.b1.data());
    V W2 = tape.input(Shape{p.C, p.H}, p.W2.data()), b2 = tape.input(Shape{p.C}, p.b2.data());
    // log f(c)_y for every row c of `ctx` (rows, D)
    auto log_f = [&](V ctx) {
      V hidden = tanh(add(matmul(ctx, W1, false, true), b1));
      return log_softmax(add(matmul(hidden, W2, false, true), b2), -1);
    };
    V logp = log_softmax(tape.input(Shape{K}, p.scores.data()), 0);
    const std::vector<int32_t> labels(size_t(K), p.label);
    V logf = pick(log_f(X), labels.data());
    V soft_ctx = matmul(reshape(exp(logp), Shape{1, K}), X);  // E_p[x] = pᵀX  (1, D)
    r.log_p_soft = pick(log_f(soft_ctx), labels.data()).item();
    V joint = add(logp, logf);  // log p_i + log f_i
    r.log_p_exact = logsumexp(joint, 0).item();
    r.jensen = sum_all(mul(exp(logp), logf)).item();
    for (int i = 0; i < K; ++i) {
      log_prior[size_t(i)] = logp.val()[i];
      log_lik[size_t(i)] = logf.val()[i];
      r.prior.push_back(std::exp(logp.val()[i]));
      r.likelihood.push_back(std::exp(logf.val()[i]));
      r.posterior.push_back(std::exp(joint.val()[i] - r.log_p_exact));
    }
  }

  // The variational side: q = softmax(λ), ELBO(λ) = Σ_i q_i (log f_i + log p_i − log q_i), maximised by Adam.
  ParamStore<double> params;
  const int lambda_id = params.add("toy/lambda", Shape{K});  // zeros: q starts uniform
  if (!opt.init_lambda.empty()) {
    LAVA_CHECK(int(opt.init_lambda.size()) == K, "init_lambda has {} entries, K = {}", opt.init_lambda.size(), K);
    std::copy(opt.init_lambda.begin(), opt.init_lambda.end(), params.val(lambda_id));
  }
  Adam<double> adam;
  adam.lr = opt.lr;
  auto evaluate = [&](int step, bool update) {
    tape.reset();
    V lambda = params.var(tape, lambda_id);
    V logq = log_softmax(lambda, 0);
    V logp = tape.input(Shape{K}, log_prior.data()), logf = tape.input(Shape{K}, log_lik.data());
    V elbo = sum_all(mul(exp(logq), sub(add(logf, logp), logq)));
    // Reported figures, computed directly from q (not through the ELBO graph):
    double kl_q_prior = 0, kl_q_post = 0;
    for (int i = 0; i < K; ++i) {
      const double lq = logq.val()[i], q = std::exp(lq);
      kl_q_prior += q * (lq - log_prior[size_t(i)]);
      kl_q_post += q * (lq - std::log(r.posterior[size_t(i)]));
    }
    const double e = elbo.item(), gap = r.log_p_exact - e;
    r.trace.push_back({step, e, gap, kl_q_post});
    r.max_identity_error = std::max(r.max_identity_error, std::abs(gap - kl_q_post));
    if (update) {
      V loss = affine(elbo, -1.0, 0.0);
      tape.backward(loss);  // accumulates into zeros: the last Adam step consumed the gradients
      adam.step(params);
    } else {
      r.elbo = e, r.kl_q_prior = kl_q_prior, r.kl_q_posterior = kl_q_post, r.kl_gap = gap;
      r.identity_error = std::abs(gap - kl_q_post);
      for (int i = 0; i < K; ++i) r.q.push_back(std::exp(logq.val()[i]));
    }
  };
  for (int step = 0; step < opt.steps; ++step) evaluate(step, true);
  evaluate(opt.steps, false);

  r.scalar_f_of_mean = std::pow(0.5 * 0 + 0.5 * 2, 2);        // f(E[z]) = 1² = 1
  r.scalar_mean_of_f = 0.5 * std::pow(0, 2) + 0.5 * std::pow(2, 2);  // E[f(z)] = (0 + 4)/2 = 2
  return r;
}

}  // namespace lava
