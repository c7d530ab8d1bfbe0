#include "attention/objective_parts.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lava {

Var<float> one_hot(Tape<float>& tape, const Shape& s, const int32_t* z) {
  Var<float> w = tape.full(s, 0.f);
  const int64_t S = s[-1], N = s.numel() / S;
  for (int64_t n = 0; n < N; ++n) w.val()[n * S + z[n]] = 1.f;
  return w;
}

Var<float> kl_categorical(Var<float> log_q, Var<float> log_p) { return sum(mul(exp(log_q), sub(log_q, log_p)), -1); }

double masked_sum(const float* per_token, const float* mask, int64_t n_tokens) {
  double s = 0;
  for (int64_t n = 0; n < n_tokens; ++n) s += double(mask[n]) * per_token[n];
  return s;
}
double masked_sum(Var<float> per_token, const float* mask) {
  return masked_sum(per_token.val(), mask, per_token.numel());
}

ObjectiveTerms masked_terms(Var<float> per_token, Var<float> value, Var<float> kl, const ObjectiveTargets& t) {
  ObjectiveTerms out;
  out.objective = sum_all(mul(per_token, t.mask));
  out.value_sum = masked_sum(value, t.token_mask);
  if (kl.tape) out.kl_sum = masked_sum(kl, t.token_mask);
  return out;
}

ObjectiveTerms direct_objective(Ctx& c, const OutputHead& head, Var<float> weights, const ObjectiveTargets& t) {
  Var<float> log_f = head.log_f_weighted(c, weights, t.y);
  return masked_terms(log_f, log_f, {}, t);
}

Var<float> top_k_prior(Tape<float>& tape, Var<float> log_prior, int kmax) {
  const Shape sdist = log_prior.shape();
  const int64_t S = sdist[-1], N = sdist.numel() / S;
  std::vector<float> w(static_cast<size_t>(N * S), 0.f);
  std::vector<std::pair<float, int64_t>> order;
  for (int64_t n = 0; n < N; ++n) {
    const float* lp = log_prior.val() + n * S;
    order.clear();
    for (int64_t s = 0; s < S; ++s)
      if (lp[s] > kMaskedLogit / 2) order.push_back({-lp[s], s});
    const size_t keep = std::min(order.size(), size_t(kmax));
    std::partial_sort(order.begin(), order.begin() + ptrdiff_t(keep), order.end());
    double z = 0;
    for (size_t k = 0; k < keep; ++k) z += std::exp(double(lp[order[k].second] - lp[order[0].second]));
    for (size_t k = 0; k < keep; ++k)
      w[size_t(n * S + order[k].second)] = float(std::exp(double(lp[order[k].second] - lp[order[0].second])) / z);
  }
  return constant(tape, sdist, w.data());
}

AttentionEvalSums enumerated_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                                  const int32_t* y, const float* token_mask, int kmax) {
  const int64_t S = d.log_prior.dim(-1), N = d.log_prior.numel() / S;
  Var<float> log_f = head.log_f_all(c, y);
  return attention_eval(v, d.log_prior.val(), d.has_q() ? d.log_q.val() : nullptr, log_f.val(), nullptr, token_mask,
                        N, S, kmax);
}

AttentionEvalSums direct_eval(Ctx& c, AttnVariant v, const OutputHead& head, const AttentionDists& d,
                              Var<float> weights, const int32_t* y, const float* token_mask, int kmax) {
  const int64_t S = d.log_prior.dim(-1), N = d.log_prior.numel() / S;
  Var<float> direct = head.log_f_weighted(c, weights, y);
  return attention_eval(v, d.log_prior.val(), nullptr, nullptr, direct.val(), token_mask, N, S, kmax);
}

}  // namespace lava
