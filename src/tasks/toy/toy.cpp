#include "tasks/toy/toy.hpp"

#include <algorithm>
#include <cmath>

#include "autodiff/ops.hpp"
#include "core/check.hpp"
#include "nn/optim.hpp"
#include "nn/params.hpp"

namespace lava {

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
