#include "tasks/caption/model.hpp"

#include <algorithm>
#include <cmath>

#include "attention/doubly_stochastic.hpp"
#include "core/check.hpp"
#include "tasks/caption/trainer.hpp"
#include "tasks/model_metadata.hpp"

namespace lava {

std::map<std::string, std::string> CaptionConfig::to_metadata() const {
  std::map<std::string, std::string> meta{
          {"task", "caption"}, {"words", std::to_string(words)}, {"feature_dim", std::to_string(feature_dim)}};
  option_metadata(caption_model_options(), *this, meta);  // the sizes, under their command-line names
  attn_registry().to_metadata(attn, "caption", meta);
  return meta;
}

CaptionConfig CaptionConfig::from_metadata(const std::map<std::string, std::string>& meta, const std::string& file) {
  const ModelMetadata m(meta, file);
  m.expect_task("caption", "captioning");
  CaptionConfig c;
  c.attn = m.get_attn();
  c.words = m.get_int("words", 1), c.feature_dim = m.get_int("feature_dim", 1);
  m.get_options(caption_model_options(), c);
  return c;
}

CaptionModel::CaptionModel(const CaptionConfig& cfg) : cfg_(cfg) {
  LAVA_CHECK(cfg.words > 0 && cfg.feature_dim > 0, "caption sizes {} {}", cfg.words, cfg.feature_dim);
  const int E = cfg.emb, H = cfg.hidden, Ha = cfg.annotation, A = cfg.attn_size;
  word_emb_ = ps.add("word_emb", Shape{cfg.words, E});
  region_ = Linear(ps, "region", cfg.feature_dim, Ha);
  init_h_ = Linear(ps, "init/h", Ha, H), init_c_ = Linear(ps, "init/c", Ha, H);
  att_q_ = Linear(ps, "attention/W_q", H, A, false), att_k_ = Linear(ps, "attention/W_k", Ha, A, true);
  att_v_ = ps.add("attention/v", Shape{A});
  beta_ = Linear(ps, "attention/beta", H, 1);
  lstm_in_ = ps.add("lstm/W_in", Shape{E, 4 * H}), lstm_ctx_ = ps.add("lstm/W_ctx", Shape{Ha, 4 * H});
  lstm_hh_ = ps.add("lstm/W_hh", Shape{H, 4 * H}), lstm_b_ = ps.add("lstm/b", Shape{4 * H});
  out_h_ = Linear(ps, "output/L_h", H, E), out_z_ = Linear(ps, "output/L_z", Ha, E, false);
  gen_ = Linear(ps, "output/L_o", E, cfg.words);
  if (variant_info(cfg.attn).uses_q) {
    q_h_ = Linear(ps, "inference/Q_h", H, A, false), q_y_ = Linear(ps, "inference/Q_y", E, A, false);
    q_k_ = Linear(ps, "inference/Q_k", Ha, A, true);
    q_v_ = ps.add("inference/u", Shape{A});
  }
  baseline_ = ps.add("sat/baseline", Shape{1});
}

Var<float> CaptionModel::embed(Ctx& c, const int32_t* tokens, const Shape& shape) const {
  return c.drop(embedding(c.p(word_emb_), tokens, shape));
}

CaptionModel::Encoded CaptionModel::encode(Ctx& c, const float* features, int N) const {
  Encoded e;
  e.N = N;
  e.annotations = relu(region_(c, c.tape.input(Shape{N, kSceneRegions, cfg_.feature_dim}, features)));
  e.keys = att_k_(c, e.annotations);
  e.out_memory = out_z_(c, e.annotations);
  return e;
}

CaptionState CaptionModel::initial_state(Ctx& c, const Encoded& enc) const {
  Var<float> mean_a = mean(enc.annotations, 1);  // ā: (N, Ha)
  return {tanh(init_h_(c, mean_a)), tanh(init_c_(c, mean_a))};
}

CaptionModel::Step CaptionModel::step(Ctx& c, const Encoded& enc, const CaptionState& prev, Var<float> prev_emb) const {
  const int N = enc.N, S = kSceneRegions, Ha = cfg_.annotation;
  Step s;
  Var<float> q = reshape(att_q_(c, prev.h), Shape{N, 1, cfg_.attn_size});
  s.scores = reshape(mlp_attention_scores(q, enc.keys, c.p(att_v_)), Shape{N, S});
  s.log_alpha = log_softmax(s.scores, -1);
  // ẑ_t = β_t Σ_i α_ti a_i; β (N, 1) repeated over the Ha columns by a product with a row of ones.
  Var<float> context = reshape(matmul(reshape(exp(s.log_alpha), Shape{N, 1, S}), enc.annotations), Shape{N, Ha});
  Var<float> beta = matmul(sigmoid(beta_(c, prev.h)), c.tape.full(Shape{1, Ha}, 1.f));
  Var<float> gates = add(add(matmul(prev_emb, c.p(lstm_in_)), c.p(lstm_b_)), matmul(mul(context, beta), c.p(lstm_ctx_)));
  gates = add(gates, matmul(prev.h, c.p(lstm_hh_)));
  auto hc = lstm_cell(gates, prev.cell);
  s.state = {hc.first, hc.second};
  s.h = hc.first;
  return s;
}

CaptionModel::Forward CaptionModel::forward(Ctx& c, const CaptionBatch& batch) const {
  const int B = batch.B, T = batch.T, S = kSceneRegions, H = cfg_.hidden, E = cfg_.emb;
  LAVA_CHECK(batch.D == cfg_.feature_dim, "batch features {}, model {}", batch.D, cfg_.feature_dim);
  Encoded enc = encode(c, batch.features.data(), B);
  Var<float> emb = embed(c, batch.tgt_in.data(), Shape{B, T});  // E y_{t−1}: (B, T, E)
  CaptionState state = initial_state(c, enc);
  std::vector<Var<float>> hs, priors, scores;
  for (int t = 0; t < T; ++t) {
    Step s = step(c, enc, state, reshape(slice(emb, 1, t, 1), Shape{B, E}));
    state = s.state;
    hs.push_back(reshape(s.h, Shape{B, 1, H}));
    priors.push_back(reshape(s.log_alpha, Shape{B, 1, S}));
    scores.push_back(reshape(s.scores, Shape{B, 1, S}));
  }
  Forward f;
  f.dists.log_prior = concat(priors.data(), T, 1);
  f.dists.scores = concat(scores.data(), T, 1);
  f.alpha = exp(f.dists.log_prior);
  Var<float> h_all = concat(hs.data(), T, 1);  // (B, T, H)
  if (variant_info(cfg_.attn).uses_q) {
    Var<float> y_emb = embedding(c.p(word_emb_), batch.tgt_out.data(), Shape{B, T});
    Var<float> query = add(q_h_(c, h_all), q_y_(c, y_emb));  // (B, T, A)
    f.dists.q_scores = mlp_attention_scores(query, q_k_(c, enc.annotations), c.p(q_v_));
    f.dists.log_q = log_softmax(f.dists.q_scores, -1);
  }
  f.head.query = add(emb, out_h_(c, h_all));  // A_q = E y_{t−1} + L_h h_t + b: (B, T, E)
  f.head.memory = enc.out_memory;             // U_i = L_z a_i: (B, S, E)
  f.head.W_gen = c.p(gen_.W);
  f.head.b_gen = c.p(gen_.b);
  return f;
}

CaptionTerms CaptionModel::objective(Ctx& c, const CaptionBatch& batch, const CaptionObjective& opt) const {
  Forward f = forward(c, batch);
  CaptionTerms out;
  ObjectiveOptions o = opt.objective;
  o.sat = opt.sat, o.baseline = sat_baseline();
  out.attention = attention_objective(c, cfg_.attn, f.head, f.dists, batch.tgt_out.data(), batch.mask.data(), o);
  out.objective = out.attention.objective, out.value_sum = out.attention.value_sum, out.kl_sum = out.attention.kl_sum;
  if (opt.alpha_reg > 0) {
    const int S = kSceneRegions;
    std::vector<float> m(batch.mask.size() * S);
    for (size_t n = 0; n < batch.mask.size(); ++n) std::fill_n(m.begin() + ptrdiff_t(n * S), S, batch.mask[n]);
    Var<float> penalty = doubly_stochastic_penalty(f.alpha, c.tape.input(f.alpha.shape(), m.data()));
    out.penalty = penalty.item();
    out.objective = sub(out.objective, affine(penalty, opt.alpha_reg, 0.f));
  }
  return out;
}

AttentionEvalSums CaptionModel::evaluate(Ctx& c, const CaptionBatch& batch) const {
  NoGrad<float> no_grad(c.tape);
  Forward f = forward(c, batch);
  return attention_eval_batch(c, cfg_.attn, f.head, f.dists, batch.tgt_out.data(), batch.mask.data(), 0);
}

std::vector<float> CaptionModel::attention(Ctx& c, const CaptionBatch& batch) const {
  NoGrad<float> no_grad(c.tape);
  Forward f = forward(c, batch);
  return {f.alpha.val(), f.alpha.val() + f.alpha.numel()};
}

std::vector<float> CaptionModel::next_word_log_probs(Ctx& c, const Encoded& enc, const Step& s,
                                                     Var<float> prev_emb) const {
  NoGrad<float> no_grad(c.tape);
  const int N = enc.N, S = kSceneRegions, E = cfg_.emb, V = cfg_.words;
  OutputHead head{reshape(add(prev_emb, out_h_(c, s.h)), Shape{N, 1, E}), enc.out_memory, c.p(gen_.W), c.p(gen_.b)};
  Var<float> alpha = reshape(exp(s.log_alpha), Shape{N, 1, S});
  std::vector<float> out(size_t(N) * size_t(V));
  if (!variant_info(cfg_.attn).latent) {
    Var<float> lp = head.log_probs_weighted(c, alpha);  // (N, 1, V)
    std::copy_n(lp.val(), out.size(), out.begin());
    return out;
  }
  // log Σ_i α_i f(v | i): log f for every region and word, (N, 1, S, V), then a logsumexp over i in double.
  // Not mixture_log_softmax: it sums α_i f_i in float linear space with a vectorised exp (other bits).
  Var<float> lf = log_softmax(add(matmul(tanh(pair_add(head.query, head.memory)), head.W_gen), head.b_gen), -1);
  for (int n = 0; n < N; ++n)
    for (int v = 0; v < V; ++v) {
      double m = -INFINITY;
      for (int i = 0; i < S; ++i) m = std::max(m, double(s.log_alpha.val()[n * S + i]) + lf.val()[(size_t(n) * S + i) * V + v]);
      double z = 0;
      for (int i = 0; i < S; ++i)
        z += std::exp(double(s.log_alpha.val()[n * S + i]) + lf.val()[(size_t(n) * S + i) * V + v] - m);
      out[size_t(n) * V + v] = float(m + std::log(z));
    }
  return out;
}

}  // namespace lava
