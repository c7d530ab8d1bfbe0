#include "nn/layers.hpp"

namespace lava {

Linear::Linear(ParamStore<float>& ps, const std::string& name, int in, int out, bool bias) {
  W = ps.add(name + "/W", Shape{in, out});
  if (bias) b = ps.add(name + "/b", Shape{out});
}

Var<float> Linear::operator()(Ctx& c, Var<float> x) const {
  Var<float> y = matmul(x, c.p(W));
  return b >= 0 ? add(y, c.p(b)) : y;
}

LstmLayer::LstmLayer(ParamStore<float>& ps, const std::string& name, int in, int hidden) : H(hidden) {
  W_ih = ps.add(name + "/W_ih", Shape{in, 4 * hidden});
  W_hh = ps.add(name + "/W_hh", Shape{hidden, 4 * hidden});
  b = ps.add(name + "/b", Shape{4 * hidden});
}

Var<float> LstmLayer::operator()(Ctx& c, Var<float> x) const {
  const int64_t B = x.dim(0), T = x.dim(1);
  // The input projection for every step at once: one GEMM of (B·T, in) × (in, 4H).
  Var<float> xw = add(matmul(x, c.p(W_ih)), c.p(b));  // (B, T, 4H)
  const PackedWeight<float> Whh = pack_weight(c.p(W_hh));  // read at every step: packed once
  Var<float> h = c.tape.full(Shape{B, H}, 0.f), cell = c.tape.full(Shape{B, H}, 0.f);
  std::vector<Var<float>> hs;
  hs.reserve(size_t(T));
  for (int64_t t = 0; t < T; ++t) {
    Var<float> gates = reshape(slice(xw, 1, t, 1), Shape{B, 4 * H});
    if (t > 0) gates = add(gates, matmul(h, Whh));
    auto hc = lstm_cell(gates, cell);
    h = hc.first, cell = hc.second;
    hs.push_back(reshape(h, Shape{B, 1, H}));
  }
  return concat(hs.data(), int(T), 1);
}

std::vector<int32_t> reverse_within_lengths(int B, int T, const std::vector<int32_t>& lengths) {
  std::vector<int32_t> idx(size_t(B) * size_t(T));
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) idx[size_t(b * T + t)] = b * T + (t < lengths[size_t(b)] ? lengths[size_t(b)] - 1 - t : t);
  return idx;
}

BiLstm::BiLstm(ParamStore<float>& ps, const std::string& name, int in, int hidden, int layers) {
  for (int l = 0; l < layers; ++l) {
    const int layer_in = l == 0 ? in : hidden;
    fwd.emplace_back(ps, name + "/l" + std::to_string(l) + "/fwd", layer_in, hidden / 2);
    bwd.emplace_back(ps, name + "/l" + std::to_string(l) + "/bwd", layer_in, hidden / 2);
  }
}

Var<float> BiLstm::operator()(Ctx& c, Var<float> x, const std::vector<int32_t>& lengths) const {
  const int B = int(x.dim(0)), T = int(x.dim(1));
  const std::vector<int32_t> rev = reverse_within_lengths(B, T, lengths);
  for (size_t l = 0; l < fwd.size(); ++l) {
    if (l > 0) x = c.drop(x);
    const int64_t in = x.dim(2);
    // Reversal is a row gather on the (B·T, in) view; the embedding op is exactly that gather, with scatter-add back.
    Var<float> x_rev = reshape(embedding(reshape(x, Shape{int64_t(B) * T, in}), rev.data(), Shape{B, T}), Shape{B, T, in});
    Var<float> h_f = fwd[l](c, x);
    Var<float> h_b_rev = bwd[l](c, x_rev);
    const int64_t Hh = h_b_rev.dim(2);
    Var<float> h_b = reshape(embedding(reshape(h_b_rev, Shape{int64_t(B) * T, Hh}), rev.data(), Shape{B, T}), Shape{B, T, Hh});
    x = concat({h_f, h_b}, 2);
  }
  return x;
}

}  // namespace lava
