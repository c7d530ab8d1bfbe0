#pragma once
// A small Transformer encoder (Vaswani et al. 2017) in the pre-norm arrangement (Xiong et al. 2020), for
// `lava train --task seqvae --encoder transformer`:
//   x_0 = (emb W_in)·√H + PE                       PE[s, 2i] = sin(s / 10000^{2i/H}), PE[s, 2i+1] = cos(same)
//   per layer:  h = x + Drop(MHA(LN_1(x)))          MHA: heads of size H/heads, softmax(q kᵀ/√d_h) v, masked keys
//               x = h + Drop(W_2 relu(W_1 LN_2(h)))
//   output      LN_f(x): (B, S, H)
// Padding positions are masked as keys, so no real position reads them; their own outputs are meaningless and the
// caller must ignore them (the VAE pools with a masked mean). The ops are all gradient-checked (layer_norm in
// autodiff/ops_layernorm.hpp, the rest in autodiff/ops.hpp); heads are slices of one fused QKV projection.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/layers.hpp"

namespace lava {

struct SelfAttentionEncoderConfig {
  int in = 0;       // input (embedding) size E
  int hidden = 0;   // model size H, divisible by heads
  int heads = 4;
  int ff = 0;       // feed-forward inner size (0: 4H)
  int layers = 2;
};

class SelfAttentionEncoder {
 public:
  SelfAttentionEncoder() = default;
  SelfAttentionEncoder(ParamStore<float>& ps, const std::string& name, const SelfAttentionEncoderConfig& cfg);

  // x: (B, S, E) embeddings; pad_mask (B, S), 1 = padding. Returns (B, S, H).
  Var<float> operator()(Ctx& c, Var<float> x, const std::vector<uint8_t>& pad_mask) const;

  // The fixed sinusoidal position table, PE (S, H) row-major.
  static std::vector<float> positions(int S, int H);

 private:
  // γ = 1 + δ with δ the stored parameter, so the uniform initialisation every trainer applies (ParamStore::
  // init_uniform) starts each norm near the identity, not near γ = 0.
  struct Norm {
    int delta = -1, beta = -1;
  };
  struct Layer {
    Norm ln1, ln2;
    Linear qkv, out, ff1, ff2;
  };
  Var<float> norm(Ctx& c, const Norm& n, Var<float> x) const;
  Var<float> self_attention(Ctx& c, const Layer& l, Var<float> x, const std::vector<uint8_t>& key_mask) const;

  SelfAttentionEncoderConfig cfg_;
  Linear in_;
  std::vector<Layer> layers_;
  Norm final_;
};

}  // namespace lava
