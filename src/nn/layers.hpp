#pragma once
// Building blocks of the attention models, as parameter ids in a ParamStore plus forward functions on a tape.
// A Ctx bundles what every forward needs: the tape, the parameters, train/eval mode and the step's RNG stream.
#include <string>
#include <vector>

#include "autodiff/ops.hpp"
#include "nn/params.hpp"

namespace lava {

struct Ctx {
  Tape<float>& tape;
  ParamStore<float>& ps;
  bool training;
  CounterRng rng;  // dropout and sampling draw from children of this stream
  float dropout_p;
  uint64_t draws = 0;  // a counter that names the next child stream, so every random op gets its own
  Var<float> p(int id) { return ps.var(tape, id); }
  CounterRng next_rng() { return rng.child(draws++); }
  Var<float> drop(Var<float> x) { return dropout(x, dropout_p, next_rng(), training); }
};

// y = x W + b     x: (..., in), W: (in, out), b: (out)
struct Linear {
  int W = -1, b = -1;
  Linear() = default;
  Linear(ParamStore<float>& ps, const std::string& name, int in, int out, bool bias = true);
  Var<float> operator()(Ctx& c, Var<float> x) const;
};

// One LSTM layer over a padded batch, in one direction.
//   gates_t = x_t W_ih + h_{t−1} W_hh + b;  (h_t, c_t) = lstm_cell(gates_t, c_{t−1});  h_0 = c_0 = 0
struct LstmLayer {
  int W_ih = -1, W_hh = -1, b = -1, H = 0;
  LstmLayer() = default;
  LstmLayer(ParamStore<float>& ps, const std::string& name, int in, int hidden);
  // x: (B, T, in) -> (B, T, H)
  Var<float> operator()(Ctx& c, Var<float> x) const;
  // x W_ih + b for every step: (B, T, in) -> (B, T, 4H)
  Var<float> input_projection(Ctx& c, Var<float> x) const;
};

// A stack of bidirectional LSTM layers; each direction has hidden/2 units, outputs concatenated: (B, T, hidden).
// The backward direction reads each sequence reversed within its own length, so padding never leaks into it.
struct BiLstm {
  std::vector<LstmLayer> fwd, bwd;
  BiLstm() = default;
  BiLstm(ParamStore<float>& ps, const std::string& name, int in, int hidden, int layers);
  Var<float> operator()(Ctx& c, Var<float> x, const std::vector<int32_t>& lengths) const;
};

// (b, t) -> b·T + (len_b − 1 − t) for t < len_b, else itself: the row permutation that reverses each sequence.
std::vector<int32_t> reverse_within_lengths(int B, int T, const std::vector<int32_t>& lengths);

}  // namespace lava
