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

namespace {

// The recurrence of G independent LSTMs whose batches are stacked as row blocks: xw[g] (B, T, 4H) holds x W_ih + b
// of LSTM g for every step; each step stacks the G slices into one (G·B, 4H) gates tensor, so that one cell op
// serves all of them and matmul_blocks runs their products side by side on the threads. Returns h for every
// step, (G·B, T, H), block g first.
Var<float> lstm_recurrence(Ctx& c, const Var<float>* xw, const PackedWeight<float>* whh, int G, int64_t H) {
  const int64_t N = G * xw[0].dim(0), T = xw[0].dim(1);
  Var<float> h = c.tape.full(Shape{N, H}, 0.f), cell = c.tape.full(Shape{N, H}, 0.f);
  std::vector<Var<float>> hs;
  hs.reserve(size_t(T));
  for (int64_t t = 0; t < T; ++t) {
    Var<float> gates = reshape(slice_stacked(xw, G, 1, t, 1), Shape{N, 4 * H});
    if (t > 0) gates = add(gates, matmul_blocks(h, whh, G));
    auto hc = lstm_cell(gates, cell);
    h = hc.first, cell = hc.second;
    hs.push_back(reshape(h, Shape{N, 1, H}));
  }
  return concat(hs.data(), int(T), 1);
}

}  // namespace

// The input projection for every step at once: one GEMM of (B·T, in) × (in, 4H).
Var<float> LstmLayer::input_projection(Ctx& c, Var<float> x) const { return add(matmul(x, c.p(W_ih)), c.p(b)); }

Var<float> LstmLayer::operator()(Ctx& c, Var<float> x) const {
  Var<float> xw = input_projection(c, x);                   // (B, T, 4H)
  const PackedWeight<float> whh = pack_weight(c.p(W_hh));  // read at every step: packed once
  return lstm_recurrence(c, &xw, &whh, 1, H);
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
    const int64_t in = x.dim(2), Hh = fwd[l].H;
    // Reversal is a row gather on the (B·T, in) view; the embedding op is exactly that gather, with scatter-add back.
    Var<float> x_rev = reshape(embedding(reshape(x, Shape{int64_t(B) * T, in}), rev.data(), Shape{B, T}), Shape{B, T, in});
    // The two directions as one recurrence over 2B rows (forward rows first), each direction's step product on
    // its own thread: they are independent until the outputs are joined.
    const Var<float> xw[2] = {fwd[l].input_projection(c, x), bwd[l].input_projection(c, x_rev)};  // (B, T, 4Hh)
    const PackedWeight<float> whh[2] = {pack_weight(c.p(fwd[l].W_hh)), pack_weight(c.p(bwd[l].W_hh))};
    Var<float> hs = lstm_recurrence(c, xw, whh, 2, Hh);  // (2B, T, Hh)
    Var<float> h_b_rev = rows(hs, B, B);
    Var<float> h_b = reshape(embedding(reshape(h_b_rev, Shape{int64_t(B) * T, Hh}), rev.data(), Shape{B, T}), Shape{B, T, Hh});
    x = concat({rows(hs, 0, B), h_b}, 2);
  }
  return x;
}

}  // namespace lava
