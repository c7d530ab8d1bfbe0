#include "models/seq2seq.hpp"

#include <cmath>

#include "core/check.hpp"

namespace lava {

std::map<std::string, std::string> Seq2SeqConfig::to_metadata() const {
  return {{"task", "nmt"},
          {"attn", variant_info(attn).name},
          {"score", score},
          {"src_vocab", std::to_string(src_vocab)},
          {"tgt_vocab", std::to_string(tgt_vocab)},
          {"emb", std::to_string(emb)},
          {"hidden", std::to_string(hidden)},
          {"layers", std::to_string(layers)},
          {"attn_size", std::to_string(attn_size)},
          {"inf_hidden", std::to_string(inf_hidden)},
          {"dropout", fmt::format("{}", dropout)}};
}

Seq2SeqConfig Seq2SeqConfig::from_metadata(const std::map<std::string, std::string>& meta, const std::string& file) {
  auto get = [&](const char* key) -> const std::string& {
    auto it = meta.find(key);
    if (it == meta.end()) throw input_error(file, 0, fmt::format("model metadata lacks \"{}\"", key));
    return it->second;
  };
  auto get_int = [&](const char* key) {
    try {
      return std::stoi(get(key));
    } catch (const std::logic_error&) {
      throw input_error(file, 0, fmt::format("model metadata \"{}\" is not a number", key));
    }
  };
  if (get("task") != "nmt") throw input_error(file, 0, "not a translation model (task " + get("task") + ")");
  Seq2SeqConfig c;
  try {
    c.attn = parse_attn_variant(get("attn"));
  } catch (const UsageError&) {
    throw input_error(file, 0, "unknown attention variant " + get("attn"));
  }
  c.score = get("score");
  c.src_vocab = get_int("src_vocab"), c.tgt_vocab = get_int("tgt_vocab"), c.emb = get_int("emb");
  c.hidden = get_int("hidden"), c.layers = get_int("layers"), c.attn_size = get_int("attn_size");
  c.inf_hidden = get_int("inf_hidden");
  c.dropout = std::stof(get("dropout"));
  return c;
}

Seq2Seq::Seq2Seq(const Seq2SeqConfig& cfg) : cfg_(cfg) {
  LAVA_CHECK(cfg.hidden % 2 == 0, "hidden size {} must be even (two LSTM directions)", cfg.hidden);
  const int E = cfg.emb, H = cfg.hidden, Hd = cfg.hidden;
  src_emb_ = ps.add("src_emb", Shape{cfg.src_vocab, E});
  tgt_emb_ = ps.add("tgt_emb", Shape{cfg.tgt_vocab, E});
  encoder_ = BiLstm(ps, "encoder", E, H, cfg.layers);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string n = "decoder/l" + std::to_string(l);
    DecoderLayer d{};
    d.W_in = ps.add(n + "/W_in", Shape{l == 0 ? E : Hd, 4 * Hd});
    d.W_feed = l == 0 ? ps.add(n + "/W_feed", Shape{H, 4 * Hd}) : -1;
    d.W_hh = ps.add(n + "/W_hh", Shape{Hd, 4 * Hd});
    d.b = ps.add(n + "/b", Shape{4 * Hd});
    decoder_.push_back(d);
  }
  if (cfg.attn != AttnVariant::none) {
    if (cfg.score == "mlp") {
      score_q_ = ps.add("score/W_q", Shape{Hd, cfg.attn_size});
      score_k_ = ps.add("score/W_k", Shape{H, cfg.attn_size});
      score_v_ = ps.add("score/v", Shape{cfg.attn_size, 1});
    } else if (cfg.score == "general") {
      score_q_ = ps.add("score/W", Shape{Hd, H});
    } else {
      LAVA_CHECK(cfg.score == "dot", "unknown score {}", cfg.score);
    }
  }
  out_h_ = Linear(ps, "out/h", Hd, Hd, true);
  out_x_ = Linear(ps, "out/x", H, Hd, false);
  gen_ = Linear(ps, "generator", Hd, cfg.tgt_vocab, true);
  if (variant_info(cfg.attn).uses_q) {
    inf_src_ = BiLstm(ps, "inference/src", E, cfg.inf_hidden, 1);
    inf_tgt_ = BiLstm(ps, "inference/tgt", E, cfg.inf_hidden, 1);
    inf_bilinear_ = ps.add("inference/W", Shape{cfg.inf_hidden, cfg.inf_hidden});
  }
}

Var<float> Seq2Seq::inference_log_q(Ctx& c, const Batch& batch) const {
  const int B = batch.B, S = batch.S, T = batch.T;
  Var<float> src = c.drop(embedding(c.p(src_emb_), batch.src.data(), Shape{B, S}));
  Var<float> tgt = c.drop(embedding(c.p(tgt_emb_), batch.tgt_out.data(), Shape{B, T}));
  Var<float> hs = inf_src_(c, src, batch.src_len), ht = inf_tgt_(c, tgt, batch.tgt_len);
  Var<float> scores = matmul(matmul(ht, c.p(inf_bilinear_)), hs, false, true);  // (B, T, S)
  std::vector<uint8_t> mask(size_t(B) * T * S);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int s = 0; s < S; ++s) mask[(size_t(b) * T + t) * S + s] = batch.src_mask[size_t(b) * S + s];
  return log_softmax(masked_fill(scores, mask.data(), Shape{B, T, S}, kMaskedLogit), -1);
}

Seq2Seq::Forward Seq2Seq::forward(Ctx& c, const Batch& batch) const {
  const int B = batch.B, S = batch.S, T = batch.T, Hd = cfg_.hidden;
  Forward f;
  Var<float> src = c.drop(embedding(c.p(src_emb_), batch.src.data(), Shape{B, S}));
  Var<float> X = encoder_(c, src, batch.src_len);  // (B, S, H)
  f.memory = X;
  Var<float> tgt_in = c.drop(embedding(c.p(tgt_emb_), batch.tgt_in.data(), Shape{B, T}));

  // Step-independent pieces: input projections for every step, the scorer's key projection.
  std::vector<Var<float>> in_proj;
  in_proj.push_back(add(matmul(tgt_in, c.p(decoder_[0].W_in)), c.p(decoder_[0].b)));  // (B, T, 4Hd)
  Var<float> keys;
  if (cfg_.attn != AttnVariant::none && cfg_.score == "mlp") keys = matmul(X, c.p(score_k_));  // (B, S, A)
  Var<float> uniform;  // `none`: a fixed uniform average over the real positions
  if (cfg_.attn == AttnVariant::none) {
    std::vector<float> lp(size_t(B) * S);
    for (int b = 0; b < B; ++b)
      for (int s = 0; s < S; ++s)
        lp[size_t(b) * S + s] = s < batch.src_len[size_t(b)] ? -std::log(float(batch.src_len[size_t(b)])) : kMaskedLogit;
    uniform = c.tape.input(Shape{B, S}, lp.data());
  }

  std::vector<Var<float>> h(decoder_.size()), cell(decoder_.size());
  for (size_t l = 0; l < decoder_.size(); ++l) h[l] = cell[l] = c.tape.full(Shape{B, Hd}, 0.f);
  Var<float> context = c.tape.full(Shape{B, cfg_.hidden}, 0.f);
  std::vector<Var<float>> states, priors;
  for (int t = 0; t < T; ++t) {
    Var<float> layer_in;
    for (size_t l = 0; l < decoder_.size(); ++l) {
      const DecoderLayer& d = decoder_[l];
      Var<float> gates =
          l == 0 ? add(reshape(slice(in_proj[0], 1, t, 1), Shape{B, 4 * Hd}), matmul(context, c.p(d.W_feed)))
                 : add(matmul(c.drop(layer_in), c.p(d.W_in)), c.p(d.b));
      gates = add(gates, matmul(h[l], c.p(d.W_hh)));
      auto hc = lstm_cell(gates, cell[l]);
      h[l] = hc.first, cell[l] = hc.second;
      layer_in = h[l];
    }
    Var<float> top = layer_in;  // (B, Hd)
    Var<float> log_p;
    if (cfg_.attn == AttnVariant::none) {
      log_p = uniform;
    } else {
      Var<float> scores;
      if (cfg_.score == "mlp") {  // vᵀ tanh(W_q h + W_k x_i)
        Var<float> q = reshape(matmul(top, c.p(score_q_)), Shape{B, 1, cfg_.attn_size});
        scores = reshape(matmul(tanh(pair_add(q, keys)), c.p(score_v_)), Shape{B, S});
      } else {  // general: (h W)ᵀ x_i;  dot: hᵀ x_i
        Var<float> q = cfg_.score == "general" ? matmul(top, c.p(score_q_)) : top;
        scores = reshape(matmul(reshape(q, Shape{B, 1, cfg_.hidden}), X, false, true), Shape{B, S});
      }
      log_p = log_softmax(masked_fill(scores, batch.src_mask.data(), Shape{B, S}, kMaskedLogit), -1);
    }
    context = reshape(matmul(reshape(exp(log_p), Shape{B, 1, S}), X), Shape{B, cfg_.hidden});
    states.push_back(reshape(top, Shape{B, 1, Hd}));
    priors.push_back(reshape(log_p, Shape{B, 1, S}));
  }
  f.dists.log_prior = concat(priors.data(), T, 1);  // (B, T, S)
  if (variant_info(cfg_.attn).uses_q) f.dists.log_q = inference_log_q(c, batch);
  Var<float> Hdec = concat(states.data(), T, 1);  // (B, T, Hd)
  f.head.query = out_h_(c, Hdec);
  f.head.memory = out_x_(c, X);
  f.head.W_gen = c.p(gen_.W);
  f.head.b_gen = c.p(gen_.b);
  f.token_mask.assign(size_t(B) * T, 0.f);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < batch.tgt_len[size_t(b)]; ++t) f.token_mask[size_t(b) * T + t] = 1.f;
  return f;
}

ObjectiveTerms Seq2Seq::objective(Ctx& c, const Batch& batch, const ObjectiveOptions& opt) const {
  Forward f = forward(c, batch);
  return attention_objective(c, cfg_.attn, f.head, f.dists, batch.tgt_out.data(), f.token_mask.data(), opt);
}

AttentionEvalSums Seq2Seq::evaluate(Ctx& c, const Batch& batch, int kmax) const {
  NoGrad<float> no_grad(c.tape);
  Forward f = forward(c, batch);
  const int64_t N = int64_t(batch.B) * batch.T, S = batch.S;
  const bool latent = variant_info(cfg_.attn).latent;
  Var<float> log_f = latent ? f.head.log_f_all(c, batch.tgt_out.data()) : Var<float>{};
  Var<float> soft = latent ? Var<float>{} : f.head.log_f_weighted(c, exp(f.dists.log_prior), batch.tgt_out.data());
  return attention_eval(cfg_.attn, f.dists.log_prior.val(), f.dists.has_q() ? f.dists.log_q.val() : nullptr,
                        latent ? log_f.val() : nullptr, latent ? nullptr : soft.val(), f.token_mask.data(), N, S,
                        kmax);
}

AttentionMaps Seq2Seq::attention_maps(Ctx& c, const Batch& batch) const {
  NoGrad<float> no_grad(c.tape);
  Forward f = forward(c, batch);
  AttentionMaps m;
  m.B = batch.B, m.T = batch.T, m.S = batch.S;
  const int64_t n = int64_t(m.B) * m.T * m.S;
  m.prior.assign(f.dists.log_prior.val(), f.dists.log_prior.val() + n);
  for (float& v : m.prior) v = std::exp(v);
  if (f.dists.has_q()) {
    m.q.assign(f.dists.log_q.val(), f.dists.log_q.val() + n);
    for (float& v : m.q) v = std::exp(v);
  }
  // The exact posterior p(z | x, y) ∝ p(z) f(x, z)_y (for soft attention too: its f evaluated at one-hot z).
  Var<float> joint = add(f.dists.log_prior, f.head.log_f_all(c, batch.tgt_out.data()));
  Var<float> post = softmax(joint, -1);
  m.posterior.assign(post.val(), post.val() + n);
  return m;
}

}  // namespace lava
