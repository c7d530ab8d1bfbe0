#include "tasks/nmt/seq2seq.hpp"

#include <algorithm>
#include <cmath>

#include "attention/attention_variant.hpp"
#include "attention/attention_weights.hpp"
#include "core/check.hpp"
#include "tasks/nmt/beam_search.hpp"
#include "tasks/nmt/trainer.hpp"
#include "tasks/model_metadata.hpp"
#include "core/parallel.hpp"

namespace lava {

std::map<std::string, std::string> Seq2SeqConfig::to_metadata() const {
  std::map<std::string, std::string> meta{{"task", "nmt"},
          {"attn", variant_info(attn).name},
          {"score", enum_name(kNmtScoreNames, score)},
          {"src_vocab", std::to_string(src_vocab)},
          {"tgt_vocab", std::to_string(tgt_vocab)}};
  option_metadata(nmt_model_options(), *this, meta);  // the sizes, under their command-line names
  if (encoder != NmtEncoder::bilstm) meta["encoder"] = enum_name(kNmtEncoderNames, encoder);  // files from before the option stay as they were
  variant.to_metadata(attn, meta);
  return meta;
}

Seq2SeqConfig Seq2SeqConfig::from_metadata(const std::map<std::string, std::string>& meta, const std::string& file) {
  const ModelMetadata m(meta, file);
  m.expect_task("nmt", "translation");
  Seq2SeqConfig c;
  c.attn = m.get_attn();
  c.score = m.get_enum("score", kNmtScoreNames);
  if (meta.count("encoder")) c.encoder = m.get_enum("encoder", kNmtEncoderNames);
  c.src_vocab = m.get_int("src_vocab", 1), c.tgt_vocab = m.get_int("tgt_vocab", 1);
  m.get_options(nmt_model_options(), c);
  if (c.hidden % 2 || c.inf_hidden % 2)  // as lava train requires: the BiLSTMs split them into two directions
    throw input_error(file, 0, fmt::format("model metadata: hidden sizes {} and {} must be even (two directions)",
                                           c.hidden, c.inf_hidden));
  c.variant = m.get_variant_config(c.attn);
  return c;
}

Seq2Seq::Seq2Seq(const Seq2SeqConfig& cfg) : cfg_(cfg) {
  LAVA_CHECK(cfg.hidden % 2 == 0, "hidden size {} must be even (two LSTM directions)", cfg.hidden);
  const int E = cfg.emb, H = cfg.hidden, Hd = cfg.hidden;
  src_emb_ = ps.add("src_emb", Shape{cfg.src_vocab, E});
  tgt_emb_ = ps.add("tgt_emb", Shape{cfg.tgt_vocab, E});
  if (cfg.encoder == NmtEncoder::embedding)
    embed_memory_ = Linear(ps, "encoder/embedding", E, H, true);
  else
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
  if (variant_info(cfg.attn).attends) {
    switch (cfg.score) {
      case NmtScore::mlp:
        score_q_ = ps.add("score/W_q", Shape{Hd, cfg.attn_size});
        score_k_ = ps.add("score/W_k", Shape{H, cfg.attn_size});
        score_v_ = ps.add("score/v", Shape{cfg.attn_size, 1});
        break;
      case NmtScore::general:
        score_q_ = ps.add("score/W", Shape{Hd, H});
        break;
      case NmtScore::dot:
        break;
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
  variant_params_ = VariantParams(ps, cfg.attn, cfg.variant, Hd);
}

Var<float> Seq2Seq::inference_scores(Ctx& c, const Batch& batch) const {
  const int B = batch.B, S = batch.S, T = batch.T;
  Var<float> src = c.drop(embedding(c.p(src_emb_), batch.src.data(), Shape{B, S}));
  Var<float> tgt = c.drop(embedding(c.p(tgt_emb_), batch.tgt_out.data(), Shape{B, T}));
  Var<float> hs = inf_src_(c, src, batch.src_len), ht = inf_tgt_(c, tgt, batch.tgt_len);
  Var<float> scores = matmul(matmul(ht, c.p(inf_bilinear_)), hs, false, true);  // (B, T, S)
  std::vector<uint8_t> mask(size_t(B) * T * S);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int s = 0; s < S; ++s) mask[(size_t(b) * T + t) * S + s] = batch.src_mask[size_t(b) * S + s];
  return masked_fill(scores, mask.data(), Shape{B, T, S}, kMaskedLogit);
}

EncodedSource Seq2Seq::encode_memory(Ctx& c, const Batch& batch) const {
  EncodedSource enc;
  enc.B = batch.B, enc.S = batch.S;
  Var<float> src = c.drop(embedding(c.p(src_emb_), batch.src.data(), Shape{batch.B, batch.S}));
  // (B, S, H)
  enc.memory = cfg_.encoder == NmtEncoder::embedding ? tanh(embed_memory_(c, src)) : encoder_(c, src, batch.src_len);
  enc.mask = batch.src_mask;
  enc.lengths = batch.src_len;
  return enc;
}

Var<float> Seq2Seq::scorer_keys(Ctx& c, Var<float> memory) const {
  return variant_info(cfg_.attn).attends && cfg_.score == NmtScore::mlp ? matmul(memory, c.p(score_k_)) : Var<float>{};
}

void Seq2Seq::pack_decoder_weights(Ctx& c, EncodedSource& enc) const {
  enc.W_feed = {pack_weight(c.p(decoder_[0].W_feed))};
  enc.W_hh.clear();
  for (const DecoderLayer& d : decoder_) enc.W_hh.push_back(pack_weight(c.p(d.W_hh)));
  enc.W_q.clear();
  if (score_q_ >= 0) enc.W_q.push_back(pack_weight(c.p(score_q_)));
}

EncodedSource Seq2Seq::encode(Ctx& c, const Batch& batch) const {
  EncodedSource enc = encode_memory(c, batch);
  enc.keys = scorer_keys(c, enc.memory);
  pack_decoder_weights(c, enc);
  enc.out_memory = out_x_(c, enc.memory);  // (B, S, Hd)
  return enc;
}

DecoderState Seq2Seq::initial_state(Ctx& c, int N) const {
  DecoderState st;
  Var<float> zero = c.tape.full(Shape{N, cfg_.hidden}, 0.f);
  st.h.assign(decoder_.size(), zero);
  st.cell.assign(decoder_.size(), zero);
  st.context = c.tape.full(Shape{N, cfg_.hidden}, 0.f);
  return st;
}

DecoderStep Seq2Seq::decoder_step(Ctx& c, const EncodedSource& enc, int K, const DecoderState& prev,
                                  const int32_t* prev_tokens) const {
  const int N = enc.B * K;
  Var<float> emb = c.drop(embedding(c.p(tgt_emb_), prev_tokens, Shape{N}));  // (N, E)
  return step_from_input(c, enc, K, prev, add(matmul(emb, c.p(decoder_[0].W_in)), c.p(decoder_[0].b)));
}

DecoderStep Seq2Seq::step_from_input(Ctx& c, const EncodedSource& enc, int K, const DecoderState& prev,
                                     Var<float> in0) const {
  const int B = enc.B, S = enc.S, N = B * K, H = cfg_.hidden, Hd = cfg_.hidden;
  LAVA_CHECK(in0.numel() == int64_t(N) * 4 * Hd && prev.context.dim(0) == N, "decoder step: {} hypotheses, input {}",
             N, in0.shape().str());
  DecoderStep out;
  out.state.h.resize(decoder_.size());
  out.state.cell.resize(decoder_.size());
  // The LSTM stack: gates = [emb; c_{j−1}] W + h_{j−1} W_hh + b on layer 0, h^{l−1}_j W_in + h^l_{j−1} W_hh + b above.
  // x W for a weight of every step: its copy packed once for the pass when the encoding has one
  const auto step_product = [&c](Var<float> x, const std::vector<PackedWeight<float>>& packed, size_t l, int W) {
    return l < packed.size() ? matmul(x, packed[l]) : matmul(x, c.p(W));
  };
  Var<float> layer_in;
  for (size_t l = 0; l < decoder_.size(); ++l) {
    const DecoderLayer& d = decoder_[l];
    Var<float> gates = l == 0 ? add(in0, step_product(prev.context, enc.W_feed, 0, d.W_feed))
                              : add(matmul(c.drop(layer_in), c.p(d.W_in)), c.p(d.b));
    gates = add(gates, step_product(prev.h[l], enc.W_hh, l, d.W_hh));
    auto hc = lstm_cell(gates, prev.cell[l]);
    out.state.h[l] = hc.first, out.state.cell[l] = hc.second;
    layer_in = hc.first;
  }
  out.top = layer_in;  // (N, Hd)

  // The prior over source positions; padding gets kMaskedLogit (probability exactly 0). Without a scorer
  // (AttnVariantInfo::attends), a fixed uniform average over the real positions.
  std::vector<uint8_t> expanded;  // (N, S) mask when K > 1
  const uint8_t* mask = enc.mask.data();
  if (K > 1) {
    expanded.resize(size_t(N) * S);
    for (int n = 0; n < N; ++n) std::copy_n(enc.mask.data() + size_t(n / K) * S, S, expanded.data() + size_t(n) * S);
    mask = expanded.data();
  }
  if (!variant_info(cfg_.attn).attends) {
    std::vector<float> lp(size_t(N) * S);
    for (int n = 0; n < N; ++n)
      for (int s = 0; s < S; ++s) {
        const int len = enc.lengths[size_t(n / K)];
        lp[size_t(n) * S + s] = s < len ? -std::log(float(len)) : kMaskedLogit;
      }
    out.log_prior = out.scores = c.tape.input(Shape{N, S}, lp.data());
  } else {
    Var<float> scores;
    if (cfg_.score == NmtScore::mlp) {  // vᵀ tanh(W_q h + W_k x_i)
      Var<float> q = reshape(step_product(out.top, enc.W_q, 0, score_q_), Shape{B, K, cfg_.attn_size});
      scores = reshape(mlp_attention_scores(q, enc.keys, c.p(score_v_)), Shape{N, S});
    } else {  // general: (h W)ᵀ x_i;  dot: hᵀ x_i
      Var<float> q = cfg_.score == NmtScore::general ? step_product(out.top, enc.W_q, 0, score_q_) : out.top;
      scores = reshape(matmul(reshape(q, Shape{B, K, H}), enc.memory, false, true), Shape{N, S});
    }
    out.scores = masked_fill(scores, mask, Shape{N, S}, kMaskedLogit);
    out.log_prior = log_softmax(out.scores, -1);
  }
  // Input feeding: the soft context under the prior, for every variant.
  out.state.context = reshape(matmul(reshape(exp(out.log_prior), Shape{B, K, S}), enc.memory), Shape{N, H});
  return out;
}

Seq2Seq::Forward Seq2Seq::forward(Ctx& c, const Batch& batch) const {
  const int B = batch.B, S = batch.S, T = batch.T, Hd = cfg_.hidden;
  Forward f;
  // The same pieces as encode(), in the order that keeps the backward pass's accumulation order (and so the
  // training bits) of the original forward: keys after the input projection, U after the decoder.
  EncodedSource enc = encode_memory(c, batch);
  f.memory = enc.memory;
  // Teacher forcing: the first layer's input projection for every step at once, one GEMM of (B·T, E) × (E, 4Hd).
  Var<float> tgt_in = c.drop(embedding(c.p(tgt_emb_), batch.tgt_in.data(), Shape{B, T}));
  Var<float> in_proj = add(matmul(tgt_in, c.p(decoder_[0].W_in)), c.p(decoder_[0].b));  // (B, T, 4Hd)
  enc.keys = scorer_keys(c, enc.memory);
  pack_decoder_weights(c, enc);
  DecoderState state = initial_state(c, B);
  std::vector<Var<float>> states, priors, scores;
  for (int t = 0; t < T; ++t) {
    DecoderStep step = step_from_input(c, enc, 1, state, reshape(slice(in_proj, 1, t, 1), Shape{B, 4 * Hd}));
    state = step.state;
    states.push_back(reshape(step.top, Shape{B, 1, Hd}));
    priors.push_back(reshape(step.log_prior, Shape{B, 1, S}));
    scores.push_back(reshape(step.scores, Shape{B, 1, S}));
  }
  f.dists.log_prior = concat(priors.data(), T, 1);  // (B, T, S)
  f.dists.scores = concat(scores.data(), T, 1);     // (B, T, S)
  if (variant_info(cfg_.attn).uses_q) {
    f.dists.q_scores = inference_scores(c, batch);
    f.dists.log_q = log_softmax(f.dists.q_scores, -1);
  }
  f.dists.extra = variant_params_.vars(c);
  Var<float> Hdec = concat(states.data(), T, 1);  // (B, T, Hd)
  f.head.query = out_h_(c, Hdec);
  f.head.memory = out_x_(c, enc.memory);
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
  return attention_eval_batch(c, cfg_.attn, f.head, f.dists, batch.tgt_out.data(), f.token_mask.data(), kmax);
}

AttentionMaps Seq2Seq::attention_maps(Ctx& c, const Batch& batch) const {
  NoGrad<float> no_grad(c.tape);
  Forward f = forward(c, batch);
  AttentionMaps m;
  m.B = batch.B, m.T = batch.T, m.S = batch.S;
  const int64_t n = int64_t(m.B) * m.T * m.S;
  Var<float> w = attention_weights(cfg_.attn, f.dists);  // the prior itself for the categorical variants
  m.prior.assign(w.val(), w.val() + n);
  if (f.dists.has_q()) {
    Var<float> log_q = cfg_.attn->q_log_probs(f.dists);
    m.q.assign(log_q.val(), log_q.val() + n);
    for (float& v : m.q) v = std::exp(v);
  }
  // The exact posterior p(z | x, y) ∝ p(z) f(x, z)_y (for soft attention too: its f evaluated at one-hot z).
  Var<float> joint = add(cfg_.attn->prior_log_probs(f.dists), f.head.log_f_all(c, batch.tgt_out.data()));
  Var<float> post = softmax(joint, -1);
  m.posterior.assign(post.val(), post.val() + n);
  return m;
}

void Seq2Seq::next_word_log_probs(Ctx& c, const EncodedSource& enc, int K, const DecoderStep& step, int kmax,
                                  const uint8_t* live, float* out) const {
  LAVA_CHECK(!c.tape.grad_enabled(), "next_word_log_probs is for decoding: run it under NoGrad");
  // A = h_j W + b, the query's part of the output layer: (N, Hd); U = x_i W_x: (B, S, Hd); the prior (N, S).
  AttentionDists d;
  d.log_prior = step.log_prior, d.scores = step.scores;
  const auto [log_w, normalised] = test_log_weights(c, d);
  word_log_probs(c, out_h_(c, step.top).val(), enc.out_memory.val(), log_w.val(), enc.B * K, K, enc.S, kmax,
                 normalised, live, out);
}

std::pair<Var<float>, bool> Seq2Seq::test_log_weights(Ctx& c, AttentionDists d) const {
  const AttnVariantInfo& info = variant_info(cfg_.attn);
  if (info.decodes_prior) return {d.log_prior, true};
  d.extra = variant_params_.vars(c);
  return {log(attention_weights(cfg_.attn, d)), info.weights_normalised};
}

int64_t Seq2Seq::count_correct(Ctx& c, const Batch& batch, int kmax) const {
  NoGrad<float> no_grad(c.tape);
  Forward f = forward(c, batch);
  const int64_t N = int64_t(batch.B) * batch.T, V = cfg_.tgt_vocab;
  // Token n = b·T + t reads sentence n / T = b: the teacher-forced batch is the decoder with K = T "hypotheses".
  std::vector<uint8_t> live(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) live[size_t(n)] = f.token_mask[size_t(n)] > 0.f;
  float* out = c.tape.scratch<float>(N * V);  // (N, V)
  const auto [log_w, normalised] = test_log_weights(c, f.dists);
  word_log_probs(c, f.head.query.val(), f.head.memory.val(), log_w.val(), int(N), batch.T, batch.S, kmax, normalised,
                 live.data(), out);
  int64_t correct = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (!live[size_t(n)]) continue;
    const float* row = out + n * V;
    correct += std::max_element(row, row + V) - row == batch.tgt_out[size_t(n)];  // ties: the lowest word id
  }
  return correct;
}

void Seq2Seq::word_log_probs(Ctx& c, const float* A, const float* U, const float* lp, int N, int K, int S, int kmax,
                             bool normalise, const uint8_t* live, float* out) const {
  const int Hd = cfg_.hidden, V = cfg_.tgt_vocab;
  const bool latent = variant_info(cfg_.attn).latent;
  if (!variant_info(cfg_.attn).kmax || !normalise) kmax = 0;  // a uniform average or unnormalised gates: no top K

  // The prior of each live hypothesis, in double over its real positions (padding has probability exactly 0),
  // restricted to the top kmax with K-max, and renormalised as attention_eval does: terms (position, log weight).
  std::vector<int32_t> hyps;
  std::vector<int64_t> term_begin{0};
  std::vector<std::pair<int32_t, float>> terms;
  std::vector<std::pair<float, int32_t>> order;
  for (int n = 0; n < N; ++n) {
    if (live && !live[n]) continue;
    const float* p = lp + size_t(n) * S;
    order.clear();
    for (int32_t s = 0; s < S; ++s)
      if (p[s] > kMaskedLogit / 2) order.push_back({-p[s], s});
    if (kmax > 0 && kmax < int(order.size())) {
      std::partial_sort(order.begin(), order.begin() + kmax, order.end());  // largest first, ties: lower position
      order.resize(size_t(kmax));
      std::sort(order.begin(), order.end(), [](auto x, auto y) { return x.second < y.second; });
    }
    double m = -INFINITY, z = 0;
    for (auto [neg, s] : order) m = std::max(m, double(p[s]));
    for (auto [neg, s] : order) z += std::exp(double(p[s]) - m);
    const double log_norm = normalise ? m + std::log(z) : 0.0;
    for (auto [neg, s] : order) terms.push_back({s, float(double(p[s]) - log_norm)});
    hyps.push_back(n);
    term_begin.push_back(int64_t(terms.size()));
  }
  const int64_t nh = int64_t(hyps.size());
  if (nh == 0) return;

  // Output-layer inputs o = tanh(A_n + U_s): one row per term (latent), or one row at the soft context per
  // hypothesis, tanh(A_n + Σ_s w_s U_s) (soft, none).
  std::vector<int64_t> row_begin(size_t(nh) + 1);
  for (int64_t k = 0; k <= nh; ++k) row_begin[size_t(k)] = latent ? term_begin[size_t(k)] : k;
  const int64_t R = row_begin[size_t(nh)];
  float* o = c.tape.scratch<float>(R * Hd);     // (R, Hd)
  float* logw = c.tape.scratch<float>(R);       // (R)
#pragma omp parallel for schedule(static) if (R * Hd >= kParallelMin)
  for (int64_t k = 0; k < nh; ++k) {
    const int n = hyps[size_t(k)];
    const float* a = A + int64_t(n) * Hd;
    const float* u = U + int64_t(n / K) * S * Hd;
    if (latent) {
      for (int64_t t = term_begin[size_t(k)]; t < term_begin[size_t(k) + 1]; ++t) {
        const auto [s, lw] = terms[size_t(t)];
        float* row = o + t * Hd;
        for (int h = 0; h < Hd; ++h) row[h] = std::tanh(a[h] + u[int64_t(s) * Hd + h]);
        logw[t] = lw;
      }
    } else {
      float* row = o + k * Hd;
      for (int h = 0; h < Hd; ++h) row[h] = 0.f;
      for (int64_t t = term_begin[size_t(k)]; t < term_begin[size_t(k) + 1]; ++t) {
        const auto [s, lw] = terms[size_t(t)];
        const float ws = std::exp(lw);
        for (int h = 0; h < Hd; ++h) row[h] += ws * u[int64_t(s) * Hd + h];
      }
      for (int h = 0; h < Hd; ++h) row[h] = std::tanh(a[h] + row[h]);
      logw[k] = 0.f;
    }
  }
  int64_t chunk = 256;
  for (int64_t k = 0; k < nh; ++k) chunk = std::max(chunk, row_begin[size_t(k) + 1] - row_begin[size_t(k)]);
  float* logits = c.tape.scratch<float>(std::min(chunk, R) * V);
  mixture_log_softmax(out, logits, o, logw, row_begin.data(), hyps.data(), nh, c.p(gen_.W).val(), c.p(gen_.b).val(),
                      Hd, V, chunk);
}

}  // namespace lava
