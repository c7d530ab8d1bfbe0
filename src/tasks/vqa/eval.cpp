#include "tasks/vqa/eval.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "attention/collapse_monitor.hpp"
#include "core/check.hpp"

namespace lava {

int first_argmax(const double* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

void vqa_predictive(AttnVariant v, const VqaScores& s, int b, double* out) {
  const int R = s.R, V = s.V;
  if (!variant_info(v).latent) {
    for (int a = 0; a < V; ++a) out[a] = s.log_soft[size_t(b) * size_t(V) + size_t(a)];
    return;
  }
  // logsumexp_i (log p_i + log f_iv)
  const float* lp = s.log_prior.data() + size_t(b) * size_t(R);
  const float* lf = s.log_f.data() + size_t(b) * size_t(R) * size_t(V);  // (R, V)
  for (int a = 0; a < V; ++a) {
    double m = -INFINITY, acc = 0;
    for (int i = 0; i < R; ++i) m = std::max(m, double(lp[i]) + double(lf[size_t(i) * size_t(V) + size_t(a)]));
    for (int i = 0; i < R; ++i) acc += std::exp(double(lp[i]) + double(lf[size_t(i) * size_t(V) + size_t(a)]) - m);
    out[a] = m + std::log(acc);
  }
}

void VqaSums::add(const VqaSums& o) {
  attention.add(o.attention);
  questions += o.questions, unseen += o.unseen, correct += o.correct;
  counted += o.counted, vqa_score += o.vqa_score;
  region_questions += o.region_questions, region_prior += o.region_prior;
  region_posterior += o.region_posterior, region_q += o.region_q;
  one_region += o.one_region;
}

void VqaEvalSums::add(const VqaEvalSums& o) {
  VqaSums::add(o);
  for (const auto& [type, sums] : o.per_type) per_type[type].add(sums);
}

bool VqaFigures::q_collapsed() const {
  return !std::isnan(q_entropy) && CollapseMonitor::collapsed(kl, q_entropy, entropy);
}

VqaFigures vqa_subset_figures(const VqaSums& s, bool has_q) {
  VqaFigures f;
  const AttentionEvalSums& a = s.attention;
  f.questions = s.questions, f.unseen = s.unseen;
  if (s.questions > 0) f.accuracy = s.correct / s.questions;
  if (s.counted > 0) f.vqa_score = s.vqa_score / s.counted;
  if (a.tokens > 0) {
    f.nll = -a.log_lik / a.tokens;
    f.elbo = a.elbo / a.tokens;
    f.kl = a.kl / a.tokens;
    f.kl_gap = (a.log_lik - a.elbo) / a.tokens;
    f.kl_posterior = a.kl_posterior / a.tokens;
    f.entropy = a.entropy / a.tokens;
    if (a.support > 0) f.support = a.support / a.tokens;
  }
  f.identity_error = a.identity_error();
  if (has_q && !a.sampled && a.tokens > 0) f.q_entropy = a.q_entropy / a.tokens;
  if (a.sampled) {  // an importance-weighted estimate: no exact posterior behind kl_posterior
    f.kl_posterior = NAN;
    if (a.tokens > 0) f.nll_mean_attn = -a.mean_attn_log_lik / a.tokens;
  }
  f.region_questions = s.region_questions;
  if (s.region_questions > 0) {
    f.region_acc_prior = s.region_prior / s.region_questions;
    f.region_acc_posterior = s.region_posterior / s.region_questions;
    if (has_q) f.region_acc_q = s.region_q / s.region_questions;
  }
  return f;
}

VqaEvalFigures vqa_figures(const VqaEvalSums& s, bool has_q) {
  VqaEvalFigures f;
  static_cast<VqaFigures&>(f) = vqa_subset_figures(s, has_q);
  VqaSums single;
  for (const auto& [type, sums] : s.per_type) {
    const bool one = sums.questions > 0 && sums.one_region == sums.questions;
    f.per_type.push_back({type, one, vqa_subset_figures(sums, has_q)});
    if (!one) continue;
    f.single_region_types.push_back(type);
    single.add(sums);
  }
  f.single_region = vqa_subset_figures(single, has_q);
  return f;
}

void score_vqa_batch(AttnVariant v, const VqaScores& s, const std::vector<const VqaQuestion*>& questions,
                     const int32_t* answer, const AnswerVocab& answers, VqaEvalSums& sums) {
  const int B = s.B, R = s.R, V = s.V;
  LAVA_CHECK(int(questions.size()) == B && answers.size() == V, "{} questions for {} rows, {} answers for {}",
             questions.size(), B, answers.size(), V);
  const bool latent = variant_info(v).latent, has_q = !s.log_q.empty();
  // The likelihood figures: log f at each question's answer, (B, R), and at the soft context, (B); mask = known.
  std::vector<float> log_f_y(size_t(B) * size_t(R)), soft_y(size_t(B), 0.f), known(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    const int y = std::max(answer[b], 0);
    known[size_t(b)] = answer[b] >= 0 ? 1.f : 0.f;
    for (int i = 0; i < R; ++i)
      log_f_y[size_t(b) * size_t(R) + size_t(i)] = s.log_f[(size_t(b) * size_t(R) + size_t(i)) * size_t(V) + size_t(y)];
    if (!latent) soft_y[size_t(b)] = s.log_soft[size_t(b) * size_t(V) + size_t(y)];
  }
  auto type_of = [&](int b) -> const std::string& {
    static const std::string untyped = "untyped";
    const std::string& t = questions[size_t(b)]->qtype;
    return t.empty() ? untyped : t;
  };
  auto eval_masked = [&](const float* mask) {
    return attention_eval(v, s.log_prior.data(), has_q ? s.log_q.data() : nullptr, log_f_y.data(), soft_y.data(),
                          mask, B, R, 0);
  };
  if (variant_info(v).sampled) {
    sums.attention.add(s.sampled);  // a batch sum: no per-type share (see eval.hpp)
  } else {
    sums.attention.add(eval_masked(known.data()));
    // Each type's share: the same per-question terms under the mask known ∧ (qtype = t).
    std::map<std::string, std::vector<float>> type_mask;
    for (int b = 0; b < B; ++b) {
      auto [it, fresh] = type_mask.try_emplace(type_of(b));
      if (fresh) it->second.assign(size_t(B), 0.f);
      it->second[size_t(b)] = known[size_t(b)];
    }
    for (const auto& [type, mask] : type_mask) sums.per_type[type].attention.add(eval_masked(mask.data()));
  }

  std::vector<double> predictive(static_cast<size_t>(V)), row(static_cast<size_t>(R));
  for (int b = 0; b < B; ++b) {
    const VqaQuestion& q = *questions[size_t(b)];
    const float* lp = s.log_prior.data() + size_t(b) * size_t(R);
    const float* lf = s.log_f.data() + size_t(b) * size_t(R) * size_t(V);  // (R, V)
    vqa_predictive(v, s, b, predictive.data());
    const std::string& guess = answers.answer(first_argmax(predictive.data(), V));
    // This question's counts, added to the totals and to its type's sums.
    VqaSums one;
    one.questions = 1;
    one.correct = guess == q.answer;
    one.unseen = answer[b] < 0;
    one.one_region = q.regions.size() == 1;
    if (!q.answer_counts.empty()) {
      double n = 0;
      for (const auto& [a, count] : q.answer_counts)
        if (a == guess) n += count;
      one.counted = 1;
      one.vqa_score = std::min(n / 3.0, 1.0);
    }
    if (q.regions.size() == 1 && answer[b] >= 0) {
      const int target = q.regions[0], y = answer[b];
      one.region_questions = 1;
      for (int i = 0; i < R; ++i) row[size_t(i)] = lp[i];
      one.region_prior = first_argmax(row.data(), R) == target;
      for (int i = 0; i < R; ++i) row[size_t(i)] = double(lp[i]) + double(lf[size_t(i) * size_t(V) + size_t(y)]);
      one.region_posterior = first_argmax(row.data(), R) == target;
      if (has_q) {
        for (int i = 0; i < R; ++i) row[size_t(i)] = s.log_q[size_t(b) * size_t(R) + size_t(i)];
        one.region_q = first_argmax(row.data(), R) == target;
      }
    }
    sums.VqaSums::add(one);
    sums.per_type[type_of(b)].add(one);
  }
}

VqaEvalFigures evaluate_vqa(VqaModel& model, const VqaSplit& split, const VqaEncoded& encoded,
                            const AnswerVocab& answers, int batch_size, int64_t limit, uint64_t seed) {
  int count = int(split.questions.size());
  if (limit > 0 && limit < count) count = int(limit);
  Tape<float> tape;
  VqaEvalSums sums;
  uint64_t batch_no = 0;
  for (const std::vector<int>& idx : vqa_eval_batches(count, batch_size)) {
    tape.reset();
    // Each batch its own stream (the sampled variants draw their importance samples from it).
    Ctx c{tape, model.ps, false, CounterRng(seed, stream_id("vqa/eval")).child(batch_no++), 0.f};
    const VqaBatch batch = make_vqa_batch(split, encoded, idx);
    const VqaScores s = model.scores(c, batch);
    std::vector<const VqaQuestion*> questions;
    std::vector<int32_t> answer;
    for (int i : idx) {
      questions.push_back(&split.questions[size_t(i)]);
      answer.push_back(encoded.answer[size_t(i)]);
    }
    score_vqa_batch(model.config().attn, s, questions, answer.data(), answers, sums);
  }
  return vqa_figures(sums, variant_info(model.config().attn).uses_q);
}

}  // namespace lava
