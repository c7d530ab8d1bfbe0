#include "tasks/seqvae/model.hpp"

#include <algorithm>
#include <cmath>

#include "attention/objective.hpp"
#include "core/check.hpp"
#include "tasks/model_metadata.hpp"
#include "tasks/seqvae/trainer.hpp"
#include "prob/gaussian.hpp"

namespace lava {

std::map<std::string, std::string> SeqVaeConfig::to_metadata() const {
  std::map<std::string, std::string> meta{{"task", "seqvae"},
          {"encoder", enum_name(kSeqVaeEncoderNames, encoder)},
          {"dec-attn", enum_name(kDecoderAttentionNames, dec_attn)},
          {"score", enum_name(kSeqVaeScoreNames, score)},
          {"vocab", std::to_string(vocab)}};
  option_metadata(seqvae_model_options(), *this, meta);  // the sizes, under their command-line names
  return meta;
}

SeqVaeConfig SeqVaeConfig::from_metadata(const std::map<std::string, std::string>& meta, const std::string& file) {
  const ModelMetadata m(meta, file);
  m.expect_task("seqvae", "sequence VAE");
  SeqVaeConfig c;
  c.encoder = m.get_enum("encoder", kSeqVaeEncoderNames);
  c.dec_attn = m.get_enum("dec-attn", kDecoderAttentionNames);
  c.score = m.get_enum("score", kSeqVaeScoreNames);
  c.vocab = m.get_int("vocab", 4);
  m.get_options(seqvae_model_options(), c);  // lava train's ranges
  if (c.hidden % 2 || (c.encoder == SeqVaeEncoder::transformer && c.hidden % c.heads))
    throw input_error(file, 0, fmt::format("model metadata: hidden size {} does not fit the encoder", c.hidden));
  return c;
}

SeqVae::SeqVae(const SeqVaeConfig& cfg) : cfg_(cfg) {
  LAVA_CHECK(cfg.hidden % 2 == 0, "hidden size {} must be even (two LSTM directions)", cfg.hidden);
  const int E = cfg.emb, H = cfg.hidden, Hd = cfg.hidden, Z = cfg.latent;
  emb_ = ps.add("emb", Shape{cfg.vocab, E});  // shared by encoder and decoder: one vocabulary
  if (cfg.encoder == SeqVaeEncoder::lstm)
    lstm_encoder_ = BiLstm(ps, "encoder", E, H, cfg.layers);
  else
    tf_encoder_ = SelfAttentionEncoder(ps, "encoder", {E, H, cfg.heads, cfg.ff, cfg.tf_layers});
  to_mu_ = Linear(ps, "posterior/mu", H, Z);
  to_log_sigma_ = Linear(ps, "posterior/log_sigma", H, Z);
  for (int l = 0; l < cfg.layers; ++l)
    decoder_.emplace_back(ps, "decoder/l" + std::to_string(l), l == 0 ? E + Z : Hd, Hd);
  if (cfg.dec_attn == DecoderAttention::soft) {
    if (cfg.score == SeqVaeScore::additive) {
      score_q_ = ps.add("score/W_q", Shape{Hd, cfg.attn_size});
      score_k_ = ps.add("score/W_k", Shape{H, cfg.attn_size});
      score_v_ = ps.add("score/v", Shape{cfg.attn_size, 1});
    } else {
      score_q_ = ps.add("score/W", Shape{Hd, H});
    }
    out_c_ = Linear(ps, "out/c", H, Hd, false);
  }
  out_h_ = Linear(ps, "out/h", Hd, Hd);
  gen_ = Linear(ps, "generator", Hd, cfg.vocab);
}

Var<float> SeqVae::summary(Ctx& c, const Batch& batch, Var<float> memory) const {
  const int B = batch.B, S = batch.S, H = cfg_.hidden;
  if (cfg_.encoder == SeqVaeEncoder::lstm) {
    // u_b = [→h at the last real position ‖ ←h at position 0]: each direction's state after reading all of X.
    std::vector<int32_t> last(size_t(B), 0), first(size_t(B), 0);
    for (int b = 0; b < B; ++b) last[size_t(b)] = b * S + batch.src_len[size_t(b)] - 1, first[size_t(b)] = b * S;
    Var<float> rows = reshape(memory, Shape{int64_t(B) * S, H});
    Var<float> fwd = slice(embedding(rows, last.data(), Shape{B}), 1, 0, H / 2);
    Var<float> bwd = slice(embedding(rows, first.data(), Shape{B}), 1, H / 2, H / 2);
    return concat({fwd, bwd}, 1);
  }
  // Masked mean: u_b = (1/len_b) Σ_{s < len_b} m_bs, as one batched product (B, 1, S) × (B, S, H).
  std::vector<float> w(size_t(B) * S, 0.f);
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < batch.src_len[size_t(b)]; ++s) w[size_t(b) * S + s] = 1.f / float(batch.src_len[size_t(b)]);
  return reshape(matmul(c.tape.input(Shape{B, 1, S}, w.data()), memory), Shape{B, H});
}

SeqVaeEncoding SeqVae::encode(Ctx& c, const Batch& batch) const {
  const int B = batch.B, S = batch.S;
  Var<float> x = c.drop(embedding(c.p(emb_), batch.src.data(), Shape{B, S}));  // (B, S, E)
  SeqVaeEncoding enc;
  enc.memory = cfg_.encoder == SeqVaeEncoder::lstm ? lstm_encoder_(c, x, batch.src_len) : tf_encoder_(c, x, batch.src_mask);
  Var<float> u = summary(c, batch, enc.memory);
  enc.mu = to_mu_(c, u);
  enc.sigma = exp(to_log_sigma_(c, u));
  return enc;
}

Var<float> SeqVae::sample_z(const SeqVaeEncoding& enc, const CounterRng& noise) const {
  return gaussian_sample(enc.mu, enc.sigma, noise);
}

Var<float> SeqVae::attention_context(Ctx& c, const Batch& batch, Var<float> h, Var<float> memory) const {
  const int B = batch.B, S = batch.S, T = batch.T;
  Var<float> scores;  // (B, T, S)
  if (cfg_.score == SeqVaeScore::additive) {  // vᵀ tanh(W_q h_t + W_k m_i), every (t, i) pair at once
    Var<float> q = matmul(h, c.p(score_q_));       // (B, T, A)
    Var<float> k = matmul(memory, c.p(score_k_));  // (B, S, A)
    scores = mlp_attention_scores(q, k, c.p(score_v_));
  } else {  // h_tᵀ W m_i
    scores = matmul(matmul(h, c.p(score_q_)), memory, false, true);
  }
  std::vector<uint8_t> mask(size_t(B) * T * S);  // padding keys of every query row
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      std::copy_n(batch.src_mask.data() + size_t(b) * S, S, mask.data() + (size_t(b) * T + t) * S);
  Var<float> alpha = softmax(masked_fill(scores, mask.data(), Shape{B, T, S}, kMaskedLogit), -1);
  return matmul(alpha, memory);  // (B, T, H)
}

Var<float> SeqVae::token_log_probs(Ctx& c, const Batch& batch, const SeqVaeEncoding& enc, Var<float> z) const {
  const int B = batch.B, T = batch.T;
  Var<float> y = c.drop(embedding(c.p(emb_), batch.tgt_in.data(), Shape{B, T}));  // (B, T, E)
  // z at every step: row b of z repeated T times (a gather, so its gradient sums over the steps).
  std::vector<int32_t> row(size_t(B) * T);
  for (int b = 0; b < B; ++b) std::fill_n(row.begin() + ptrdiff_t(b) * T, T, b);
  Var<float> h = concat({y, embedding(z, row.data(), Shape{B, T})}, 2);  // (B, T, E + Z)
  for (size_t l = 0; l < decoder_.size(); ++l) h = decoder_[l](c, l > 0 ? c.drop(h) : h);  // (B, T, Hd)
  Var<float> pre = out_h_(c, h);
  if (cfg_.dec_attn == DecoderAttention::soft) pre = add(pre, out_c_(c, attention_context(c, batch, h, enc.memory)));
  Var<float> o = c.drop(tanh(pre));  // (B, T, Hd)
  Var<float> lp = linear_log_softmax_pick(o, c.p(gen_.W), c.p(gen_.b), batch.tgt_out.data());  // (B, T)
  std::vector<float> mask(size_t(B) * T, 0.f);
  for (int b = 0; b < B; ++b) std::fill_n(mask.begin() + ptrdiff_t(b) * T, batch.tgt_len[size_t(b)], 1.f);
  return mul(lp, c.tape.input(Shape{B, T}, mask.data()));
}

SeqVaeTerms SeqVae::terms(Ctx& c, const Batch& batch, const CounterRng& noise, const KlOptions& opt) const {
  SeqVaeEncoding enc = encode(c, batch);
  SeqVaeTerms t;
  t.z = sample_z(enc, noise);
  Var<float> recon = sum_all(token_log_probs(c, batch, enc, t.z));
  Var<float> kl = kl_gaussian(enc.mu, enc.sigma, c.tape.full(Shape{}, 0.f), c.tape.full(Shape{}, 1.f));  // (B, Z)
  Var<float> kl_term = kl_training_term(kl, opt.free_bits);
  t.loss = sub(affine(kl_term, opt.weight, 0.f), recon);
  t.recon = double(recon.item());
  for (int64_t i = 0; i < kl.numel(); ++i) t.kl += double(kl.val()[i]);
  t.kl_trained = double(kl_term.item());
  t.tokens = batch.target_tokens();
  return t;
}

Var<float> kl_training_term(Var<float> kl, float free_bits) {
  LAVA_CHECK(kl.rank() == 2, "kl must be (B, Z), got {}", kl.shape().str());
  if (free_bits <= 0.f) return sum_all(kl);
  const float B = float(kl.dim(0));
  // B · Σ_d max(λ, KL̄_d), KL̄_d = (1/B) Σ_b KL_bd;  max(λ, k) = λ + relu(k − λ) (no gradient below λ)
  Var<float> per_dim = mean(kl, 0);  // (Z)
  Var<float> clamped = affine(relu(affine(per_dim, 1.f, -free_bits)), 1.f, free_bits);
  return affine(sum_all(clamped), B, 0.f);
}

double kl_weight(int64_t step, int64_t anneal_steps) {
  if (anneal_steps <= 0) return 1.0;
  return std::min(1.0, double(std::max<int64_t>(step, 0)) / double(anneal_steps));
}

int count_active_units(const float* mu, int64_t N, int Z, double threshold, std::vector<double>* variances) {
  std::vector<double> var(size_t(Z), 0.0);
  if (N > 0) {
    for (int d = 0; d < Z; ++d) {
      double m = 0;
      for (int64_t n = 0; n < N; ++n) m += double(mu[n * Z + d]);
      m /= double(N);
      double v = 0;
      for (int64_t n = 0; n < N; ++n) v += (double(mu[n * Z + d]) - m) * (double(mu[n * Z + d]) - m);
      var[size_t(d)] = v / double(N);
    }
  }
  const int active = int(std::count_if(var.begin(), var.end(), [&](double v) { return v > threshold; }));
  if (variances) *variances = std::move(var);
  return active;
}

}  // namespace lava
