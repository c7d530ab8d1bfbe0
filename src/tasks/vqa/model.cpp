#include "tasks/vqa/model.hpp"

#include <algorithm>
#include <cmath>

#include "attention/attention_variant.hpp"
#include "attention/attention_weights.hpp"
#include "core/check.hpp"
#include "tasks/model_metadata.hpp"
#include "tasks/vqa/trainer.hpp"

namespace lava {

std::map<std::string, std::string> VqaConfig::to_metadata() const {
  std::map<std::string, std::string> meta{{"task", "vqa"},
          {"attn", variant_info(attn).name},
          {"words", std::to_string(words)},
          {"answers", std::to_string(answers)},
          {"regions", std::to_string(regions)},
          {"feature_dim", std::to_string(feature_dim)}};
  option_metadata(vqa_model_options(), *this, meta);  // the sizes, under their command-line names
  variant.to_metadata(attn, meta);
  return meta;
}

VqaConfig VqaConfig::from_metadata(const std::map<std::string, std::string>& meta, const std::string& file) {
  const ModelMetadata m(meta, file);
  m.expect_task("vqa", "VQA");
  VqaConfig c;
  c.attn = m.get_attn();
  c.words = m.get_int("words", 1), c.answers = m.get_int("answers", 1);
  c.regions = m.get_int("regions", 1), c.feature_dim = m.get_int("feature_dim", 1);
  m.get_options(vqa_model_options(), c);
  c.variant = m.get_variant_config(c.attn);
  return c;
}

VqaModel::VqaModel(const VqaConfig& cfg) : cfg_(cfg) {
  LAVA_CHECK(cfg.words > 0 && cfg.answers > 0 && cfg.regions > 0 && cfg.feature_dim > 0, "VQA sizes {} {} {} {}",
             cfg.words, cfg.answers, cfg.regions, cfg.feature_dim);
  const int E = cfg.emb, H = cfg.hidden, A = cfg.attn_size;
  word_emb_ = ps.add("word_emb", Shape{cfg.words, E});
  question_lstm_ = LstmLayer(ps, "question", E, H);
  region_proj_ = Linear(ps, "region", cfg.feature_dim, H, true);
  if (variant_info(cfg.attn).attends) {
    prior_W1_ = ps.add("prior/W1", Shape{H, A});
    prior_W2_ = ps.add("prior/W2", Shape{H, A});
    prior_w_ = ps.add("prior/w", Shape{A, 1});
  }
  out_q_ = Linear(ps, "answer_mlp/question", H, cfg.mlp, true);
  out_x_ = Linear(ps, "answer_mlp/region", H, cfg.mlp, false);
  gen_ = Linear(ps, "answer_mlp/out", cfg.mlp, cfg.answers, true);
  if (variant_info(cfg.attn).uses_q) {
    answer_emb_ = ps.add("inference/answer_emb", Shape{cfg.answers, cfg.answer_emb});
    inf_V1_ = ps.add("inference/V1", Shape{cfg.answer_emb, H});
    inf_V2_ = ps.add("inference/V2", Shape{cfg.answer_emb, H});
    inf_U1_ = ps.add("inference/U1", Shape{H, A});
    inf_U2_ = ps.add("inference/U2", Shape{H, A});
    inf_u_ = ps.add("inference/u", Shape{A, 1});
  }
  variant_params_ = VariantParams(ps, cfg.attn, cfg.variant, cfg.mlp);
}

Var<float> VqaModel::prior_scores(Ctx& c, Var<float> question, Var<float> regions, int B) const {
  const int R = cfg_.regions, A = cfg_.attn_size;
  if (!variant_info(cfg_.attn).attends) return c.tape.full(Shape{B, 1, R}, 0.f);  // softmax: the uniform 1/R
  // scores_i = wᵀ tanh(W1 x_i + W2 x̃): (B, 1, R, A) -> (B, 1, R)
  Var<float> q = reshape(matmul(question, c.p(prior_W2_)), Shape{B, 1, A});  // (B, 1, A)
  Var<float> keys = matmul(regions, c.p(prior_W1_));                        // (B, R, A)
  // Not the fused mlp_attention_scores: its vᵀ tanh(·) and v's gradient sum in another order than gemm (other bits).
  return reshape(matmul(tanh(pair_add(q, keys)), c.p(prior_w_)), Shape{B, 1, R});
}

Var<float> VqaModel::inference_scores(Ctx& c, Var<float> question, Var<float> regions, const VqaBatch& batch) const {
  const int B = batch.B, R = batch.R, A = cfg_.attn_size;
  // h_y: (B, Ey); the answer's gates relu(V1 h_y), relu(V2 h_y): (B, H) each
  Var<float> hy = embedding(c.p(answer_emb_), batch.answer.data(), Shape{B});
  Var<float> g1 = relu(matmul(hy, c.p(inf_V1_))), g2 = relu(matmul(hy, c.p(inf_V2_)));
  // g1 repeated over the regions, (B, R, H): a row gather of (B, H) (the embedding op, whose backward sums back)
  std::vector<int32_t> rows(size_t(B) * size_t(R));
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < R; ++i) rows[size_t(b) * size_t(R) + size_t(i)] = b;
  Var<float> g1r = embedding(g1, rows.data(), Shape{B, R});
  // scores_i = uᵀ tanh(U1 (x_i ⊙ g1) + U2 (x̃ ⊙ g2)): (B, 1, R)
  Var<float> a1 = matmul(mul(regions, g1r), c.p(inf_U1_));                              // (B, R, A)
  Var<float> a2 = reshape(matmul(mul(question, g2), c.p(inf_U2_)), Shape{B, 1, A});  // (B, 1, A)
  // Not the fused mlp_attention_scores: its vᵀ tanh(·) and v's gradient sum in another order than gemm (other bits).
  return reshape(matmul(tanh(pair_add(a2, a1)), c.p(inf_u_)), Shape{B, 1, R});
}

VqaModel::Forward VqaModel::forward(Ctx& c, const VqaBatch& batch) const {
  const int B = batch.B, L = batch.L, R = batch.R, D = batch.D, H = cfg_.hidden;
  LAVA_CHECK(R == cfg_.regions && D == cfg_.feature_dim, "batch regions {}x{}, model {}x{}", R, D, cfg_.regions,
             cfg_.feature_dim);
  Forward f;
  // x̃: the LSTM state after each question's last word, a row gather of the (B·L, H) states at b·L + len_b − 1
  // (padding comes after the words, so the forward states up to there never saw it).
  Var<float> emb = embedding(c.p(word_emb_), batch.words.data(), Shape{B, L});  // (B, L, E)
  Var<float> states = question_lstm_(c, emb);                                  // (B, L, H)
  std::vector<int32_t> last(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) last[size_t(b)] = b * L + batch.lengths[size_t(b)] - 1;
  f.question = embedding(reshape(states, Shape{int64_t(B) * L, H}), last.data(), Shape{B});  // (B, H)
  Var<float> features = c.tape.input(Shape{B, R, D}, batch.features.data());                // (B, R, D)
  f.regions = relu(region_proj_(c, features));                                                // (B, R, H)
  f.dists.scores = prior_scores(c, f.question, f.regions, B);
  f.dists.log_prior = log_softmax(f.dists.scores, -1);
  if (variant_info(cfg_.attn).uses_q) {
    f.dists.q_scores = inference_scores(c, f.question, f.regions, batch);
    f.dists.log_q = log_softmax(f.dists.q_scores, -1);
  }
  f.dists.extra = variant_params_.vars(c);
  f.head.query = reshape(out_q_(c, f.question), Shape{B, 1, cfg_.mlp});  // A_q: (B, 1, M)
  f.head.memory = out_x_(c, f.regions);                                   // U: (B, R, M)
  f.head.W_gen = c.p(gen_.W);
  f.head.b_gen = c.p(gen_.b);
  f.head.relu = true;
  return f;
}

ObjectiveTerms VqaModel::objective(Ctx& c, const VqaBatch& batch, const ObjectiveOptions& opt) const {
  Forward f = forward(c, batch);
  return attention_objective(c, cfg_.attn, f.head, f.dists, batch.answer.data(), batch.known.data(), opt);
}

VqaScores VqaModel::scores(Ctx& c, const VqaBatch& batch) const {
  NoGrad<float> no_grad(c.tape);
  Forward f = forward(c, batch);
  VqaScores s;
  s.B = batch.B, s.R = batch.R, s.V = cfg_.answers;
  const size_t BR = size_t(s.B) * size_t(s.R);
  // The variant's own p and q (a sparse one has −∞ off its support).
  Var<float> log_prior = cfg_.attn->prior_log_probs(f.dists);
  s.log_prior.assign(log_prior.val(), log_prior.val() + BR);
  if (f.dists.has_q()) {
    Var<float> log_q = cfg_.attn->q_log_probs(f.dists);
    s.log_q.assign(log_q.val(), log_q.val() + BR);
    for (int b = 0; b < s.B; ++b)  // q read a placeholder answer where the real one is unseen
      if (batch.known[size_t(b)] == 0.f)
        std::copy_n(s.log_prior.begin() + ptrdiff_t(b) * s.R, s.R, s.log_q.begin() + ptrdiff_t(b) * s.R);
  }
  // log f(x, e_i) over all answers: log_softmax(W_g relu(A_q + U_i) + b_g), (B, 1, R, V); no dropout at evaluation.
  Var<float> o = relu(pair_add(f.head.query, f.head.memory));
  Var<float> lf = log_softmax(add(matmul(o, f.head.W_gen), f.head.b_gen), -1);
  s.log_f.assign(lf.val(), lf.val() + BR * size_t(s.V));
  if (!variant_info(cfg_.attn).latent) {
    Var<float> soft = f.head.log_probs_weighted(c, attention_weights(cfg_.attn, f.dists));  // (B, 1, V)
    s.log_soft.assign(soft.val(), soft.val() + size_t(s.B) * size_t(s.V));
  }
  if (variant_info(cfg_.attn).sampled) {
    std::vector<int32_t> y(static_cast<size_t>(s.B));
    for (int b = 0; b < s.B; ++b) y[size_t(b)] = std::max(batch.answer[size_t(b)], 0);
    s.sampled = attention_eval_batch(c, cfg_.attn, f.head, f.dists, y.data(), batch.known.data(), 0);
  }
  return s;
}

}  // namespace lava
