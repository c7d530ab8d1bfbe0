#include "nn/self_attention_encoder.hpp"

#include <cmath>

#include "autodiff/ops_layernorm.hpp"
#include "core/check.hpp"
#include "nn/masked_logit.hpp"

namespace lava {

SelfAttentionEncoder::SelfAttentionEncoder(ParamStore<float>& ps, const std::string& name,
                                           const SelfAttentionEncoderConfig& cfg)
    : cfg_(cfg) {
  LAVA_CHECK(cfg.heads >= 1 && cfg.hidden % cfg.heads == 0, "hidden size {} is not divisible by {} heads",
             cfg.hidden, cfg.heads);
  if (cfg_.ff <= 0) cfg_.ff = 4 * cfg.hidden;
  const int H = cfg.hidden;
  auto norm = [&](const std::string& n) {
    return Norm{ps.add(n + "/scale_delta", Shape{H}), ps.add(n + "/shift", Shape{H})};
  };
  in_ = Linear(ps, name + "/in", cfg.in, H, false);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string n = name + "/l" + std::to_string(l);
    Layer layer;
    layer.ln1 = norm(n + "/ln1");
    layer.qkv = Linear(ps, n + "/qkv", H, 3 * H);
    layer.out = Linear(ps, n + "/out", H, H);
    layer.ln2 = norm(n + "/ln2");
    layer.ff1 = Linear(ps, n + "/ff1", H, cfg_.ff);
    layer.ff2 = Linear(ps, n + "/ff2", cfg_.ff, H);
    layers_.push_back(layer);
  }
  final_ = norm(name + "/ln_final");
}

std::vector<float> SelfAttentionEncoder::positions(int S, int H) {
  std::vector<float> pe(size_t(S) * size_t(H));
  for (int s = 0; s < S; ++s)
    for (int j = 0; j < H; ++j) {
      const double angle = double(s) / std::pow(10000.0, double(j - j % 2) / double(H));
      pe[size_t(s) * size_t(H) + size_t(j)] = float(j % 2 ? std::cos(angle) : std::sin(angle));
    }
  return pe;
}

Var<float> SelfAttentionEncoder::norm(Ctx& c, const Norm& n, Var<float> x) const {
  Var<float> gamma = add(c.p(n.delta), c.tape.full(Shape{}, 1.f));  // γ = 1 + δ
  return layer_norm(x, gamma, c.p(n.beta));
}

// Multi-head scaled dot-product self-attention over a (B, S, H) input, keys masked by key_mask (B, S, S).
Var<float> SelfAttentionEncoder::self_attention(Ctx& c, const Layer& l, Var<float> x,
                                                const std::vector<uint8_t>& key_mask) const {
  const int64_t B = x.dim(0), S = x.dim(1);
  const int H = cfg_.hidden, heads = cfg_.heads, dh = H / heads;
  Var<float> qkv = l.qkv(c, x);  // (B, S, 3H): [q | k | v], each split into heads of dh columns
  std::vector<Var<float>> outs;
  for (int h = 0; h < heads; ++h) {
    Var<float> q = slice(qkv, 2, int64_t(h) * dh, dh);          // (B, S, dh)
    Var<float> k = slice(qkv, 2, int64_t(H + h * dh), dh);      // (B, S, dh)
    Var<float> v = slice(qkv, 2, int64_t(2 * H + h * dh), dh);  // (B, S, dh)
    // a[b, i, j] = q_i · k_j / √d_h, padding keys at kMaskedLogit (weight exactly 0 after the softmax)
    Var<float> scores = affine(matmul(q, k, false, true), 1.f / std::sqrt(float(dh)), 0.f);  // (B, S, S)
    Var<float> p = softmax(masked_fill(scores, key_mask.data(), Shape{B, S, S}, kMaskedLogit), -1);
    outs.push_back(matmul(p, v));  // (B, S, dh)
  }
  Var<float> cat = heads == 1 ? outs[0] : concat(outs.data(), heads, 2);  // (B, S, H)
  return l.out(c, cat);
}

Var<float> SelfAttentionEncoder::operator()(Ctx& c, Var<float> x, const std::vector<uint8_t>& pad_mask) const {
  const int64_t B = x.dim(0), S = x.dim(1);
  const int H = cfg_.hidden;
  LAVA_CHECK(int64_t(pad_mask.size()) == B * S, "pad mask of {} for a ({}, {}) batch", pad_mask.size(), B, S);
  // The key mask of every query row: mask[b, i, j] = pad[b, j].
  std::vector<uint8_t> key_mask(size_t(B * S * S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j) key_mask[size_t((b * S + i) * S + j)] = pad_mask[size_t(b * S + j)];
  const std::vector<float> pe = positions(int(S), H);
  Var<float> h = add(affine(in_(c, x), std::sqrt(float(H)), 0.f), c.tape.input(Shape{S, H}, pe.data()));
  h = c.drop(h);
  for (const Layer& l : layers_) {
    h = add(h, c.drop(self_attention(c, l, norm(c, l.ln1, h), key_mask)));
    h = add(h, c.drop(l.ff2(c, relu(l.ff1(c, norm(c, l.ln2, h))))));
  }
  return norm(c, final_, h);
}

}  // namespace lava
