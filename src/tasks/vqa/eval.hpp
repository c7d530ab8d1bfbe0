#pragma once
// Evaluation of the VQA model on a split (lava eval --task vqa, and validation during training).
//
// Per question, from the model's distributions (VqaScores):
//   predictive p(y = v | x, x̃) = Σ_i p(z = i) f(x, e_i)_v for the latent variants (the exact marginal by enumeration
//   over the R regions), f(x, E_p[z])_v for soft and none; the predicted answer is its argmax (ties: the lower id).
//   nll, elbo, kl, kl_gap, kl_posterior, entropy: attention_eval's figures (attention/objective.hpp) per question,
//   over the questions whose answer has an id (an answer unseen in training has no likelihood; it is counted in
//   `unseen` and as a wrong answer).
//   accuracy: predicted answer == the question's answer, over all questions.
//   vqa_score: min(#annotators who gave the predicted answer / 3, 1), over the questions that carry answer counts
//   (NaN when none does).
//   region_acc_*: over the questions with exactly one annotated region and a known answer, the share where the
//   argmax (ties: the lower region) of the prior p(z | x, x̃), of the exact posterior p(z | x, x̃, y) ∝ p(z) f(x, z)_y,
//   and of q(z | x, x̃, y) (NaN without q) is that region. Chance is 1 / R.
//   per_type: every figure above by question type (column 5 of the questions TSV; "untyped" when empty), from the
//   same per-question terms, so the question-weighted mean of the per-type accuracy is the overall accuracy and the
//   known-answer-weighted mean of the per-type nll is the overall nll. A type is single-region when every one of its
//   questions in the split has exactly one annotated region (on scenes: what_at, where, the four relations and
//   is_at; not how_many, whose regions are every counted item, nor is_there, whose "no" has none); single_region
//   sums those types: the questions one region answers, where a categorical z can be right. The sampled variants'
//   importance-weighted likelihood is a batch sum, so their per-type likelihood figures are NaN (accuracy is not).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tasks/vqa/model.hpp"

namespace lava {

// The sums behind the figures of one set of questions (all of them, one type, or a subset).
struct VqaSums {
  AttentionEvalSums attention;  // tokens = questions with a known answer
  double questions = 0, unseen = 0, correct = 0;
  double counted = 0, vqa_score = 0;  // questions with answer counts; Σ of their scores
  double region_questions = 0, region_prior = 0, region_posterior = 0, region_q = 0;
  double one_region = 0;  // questions with exactly one annotated region (known answer or not)
  void add(const VqaSums& o);
};

struct VqaEvalSums : VqaSums {
  std::map<std::string, VqaSums> per_type;  // qtype -> its questions' sums
  void add(const VqaEvalSums& o);
};

struct VqaFigures {
  double questions = 0, unseen = 0;
  double nll = NAN, accuracy = NAN, vqa_score = NAN, elbo = NAN, kl = NAN, kl_gap = NAN, kl_posterior = NAN;
  double identity_error = 0, entropy = NAN;
  double q_entropy = NAN;  // H(q) per question (NaN without q, or sampled)
  // q has fallen onto the prior on these questions (CollapseMonitor's test; never without q: q_entropy is NaN).
  bool q_collapsed() const;
  double region_questions = 0, region_acc_prior = NAN, region_acc_posterior = NAN, region_acc_q = NAN;
  double nll_mean_attn = NAN;  // sampled variants: nll at the mean attention (NmtEvalFigures::nll_mean_attn)
  double support = NAN;        // sparse variants: mean support size per question of the sparse p or q
};
VqaFigures vqa_subset_figures(const VqaSums& s, bool has_q);

struct VqaEvalFigures : VqaFigures {
  struct PerType {
    std::string qtype;
    bool single_region = false;
    VqaFigures figures;
  };
  std::vector<PerType> per_type;  // sorted by qtype
  std::vector<std::string> single_region_types;  // sorted; the types summed in single_region
  VqaFigures single_region;                      // questions = 0 (NaN figures) when no type is single-region
};
VqaEvalFigures vqa_figures(const VqaEvalSums& s, bool has_q);

// log p(y = v | x, x̃) for every answer v of batch row b (see above): (V).
void vqa_predictive(AttnVariant v, const VqaScores& s, int b, double* out);
// The first index of the largest of x[0..n) (ties: the lower index; NaN never wins).
int first_argmax(const double* x, int n);

// Adds batch row k = 0..B−1: question *questions[k] with answer id answer[k] (−1: unseen in training).
void score_vqa_batch(AttnVariant v, const VqaScores& s, const std::vector<const VqaQuestion*>& questions,
                     const int32_t* answer, const AnswerVocab& answers, VqaEvalSums& sums);

// The whole split (its first `limit` questions when limit > 0), in batches of batch_size, without dropout. The
// sampled variants draw their importance samples from (seed, batch) streams.
VqaEvalFigures evaluate_vqa(VqaModel& model, const VqaSplit& split, const VqaEncoded& encoded,
                            const AnswerVocab& answers, int batch_size, int64_t limit = 0, uint64_t seed = 1);

}  // namespace lava
