// The gradient-check catalogue: every op of autodiff/ops.hpp at several shapes, including broadcasting, every axis,
// every transpose case, repeated indices and masked entries. `lava gradcheck` and tests/autodiff/test_gradcheck.cpp
// run it.
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"

namespace lava {

namespace {
using V = Var<double>;
using Vs = std::vector<V>;

std::string shape_list(const std::vector<Shape>& ss, const char* sep) {
  std::string out;
  for (size_t i = 0; i < ss.size(); ++i) out += (i ? sep : "") + ss[i].str();
  return out;
}

template <class F>
GradCase one_output(std::string op, std::vector<Shape> in, F f, std::string note = "") {
  GradCase c;
  c.op = std::move(op);
  c.shape = shape_list(in, ", ") + note;
  c.inputs = std::move(in);
  c.build = [f](const Vs& x) { return Vs{f(x)}; };
  return c;
}

void add_binary(std::vector<GradCase>& cs) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 5}, {3, 5}}, {{2, 3, 4}, {4}}, {{4}, {2, 3, 4}}, {{2, 3, 4}, {3, 4}}, {{5}, {}}};
  for (auto [sa, sb] : shapes) {
    cs.push_back(one_output("add", {sa, sb}, [](const Vs& x) { return add(x[0], x[1]); }));
    cs.push_back(one_output("sub", {sa, sb}, [](const Vs& x) { return sub(x[0], x[1]); }));
    cs.push_back(one_output("mul", {sa, sb}, [](const Vs& x) { return mul(x[0], x[1]); }));
    GradCase d = one_output("div", {sa, sb}, [](const Vs& x) { return div(x[0], x[1]); });
    d.min_abs = 0.5;  // keep the divisor away from its pole
    cs.push_back(d);
  }
  cs.push_back(one_output("affine", {{3, 4}}, [](const Vs& x) { return affine(x[0], -1.7, 0.3); }));
}

void add_unary(std::vector<GradCase>& cs) {
  struct U {
    const char* name;
    V (*f)(V);
    double lo, hi, min_abs;
  };
  const U ops[] = {
      {"tanh", [](V x) { return tanh(x); }, -2, 2, 0},
      {"sigmoid", [](V x) { return sigmoid(x); }, -3, 3, 0},
      {"relu", [](V x) { return relu(x); }, -2, 2, 0.05},  // away from the kink at 0
      {"exp", [](V x) { return exp(x); }, -2, 2, 0},
      {"log", [](V x) { return log(x); }, 0.2, 3, 0},
      {"softplus", [](V x) { return softplus(x); }, -4, 4, 0},
      {"lgamma", [](V x) { return lgamma(x); }, 0.2, 8, 0},
      {"digamma", [](V x) { return digamma(x); }, 0.2, 8, 0},
      {"square", [](V x) { return square(x); }, -2, 2, 0},
  };
  for (const U& u : ops)
    for (Shape s : {Shape{7}, Shape{3, 4, 5}}) {
      auto f = u.f;
      GradCase c = one_output(u.name, {s}, [f](const Vs& x) { return f(x[0]); });
      c.lo = u.lo, c.hi = u.hi, c.min_abs = u.min_abs;
      cs.push_back(c);
    }
}

void add_axis_ops(std::vector<GradCase>& cs) {
  const Shape s{3, 4, 5};
  for (int axis : {0, 1, 2}) {
    const std::string note = " axis " + std::to_string(axis);
    cs.push_back(one_output("sum", {s}, [axis](const Vs& x) { return sum(x[0], axis); }, note));
    cs.push_back(one_output("mean", {s}, [axis](const Vs& x) { return mean(x[0], axis); }, note));
    cs.push_back(one_output("softmax", {s}, [axis](const Vs& x) { return softmax(x[0], axis); }, note));
    cs.push_back(one_output("log_softmax", {s}, [axis](const Vs& x) { return log_softmax(x[0], axis); }, note));
    cs.push_back(one_output("logsumexp", {s}, [axis](const Vs& x) { return logsumexp(x[0], axis); }, note));
  }
  cs.push_back(one_output("sum_all", {s}, [](const Vs& x) { return sum_all(x[0]); }));
  cs.push_back(one_output("mean_all", {s}, [](const Vs& x) { return mean_all(x[0]); }));
}

void add_matmul(std::vector<GradCase>& cs) {
  struct Dims {
    int M, N, K;
  };
  for (Dims d : {Dims{1, 1, 1}, Dims{3, 4, 5}, Dims{7, 13, 6}})
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      Shape sa = ta ? Shape{d.K, d.M} : Shape{d.M, d.K};
      Shape sb = tb ? Shape{d.N, d.K} : Shape{d.K, d.N};
      std::string note = std::string(" ") + (ta ? "T" : "N") + (tb ? "T" : "N");
      cs.push_back(one_output("matmul", {sa, sb}, [ta, tb](const Vs& x) { return matmul(x[0], x[1], ta, tb); },
                              note));
    }
  // A packed weight (pack_weight): rows through the packed kernel, a 3-d x, and one row (the direct path).
  for (const auto& [sx, sw] : {std::pair{Shape{7, 6}, Shape{6, 13}}, {Shape{2, 3, 5}, Shape{5, 4}},
                               {Shape{1, 9}, Shape{9, 3}}})
    cs.push_back(one_output("matmul_packed_weight", {sx, sw},
                            [](const Vs& x) { return matmul(x[0], pack_weight(x[1])); }));
  cs.push_back(one_output("matmul_packed_weight", {{3, 5}, {5, 4}, {2, 5}}, [](const Vs& x) {
    const PackedWeight<double> w = pack_weight(x[1]);  // two products: dW stacks both row blocks
    return concat({matmul(x[0], w), matmul(x[2], w)}, 0);
  }, " two products"));
  // Row blocks side by side (matmul_blocks), each with its own weight, at two steps as in a recurrence.
  cs.push_back(one_output("matmul_blocks", {{6, 5}, {5, 4}, {5, 4}, {6, 5}}, [](const Vs& x) {
    const PackedWeight<double> w[2] = {pack_weight(x[1]), pack_weight(x[2])};
    return concat({matmul_blocks(x[0], w, 2), matmul_blocks(x[3], w, 2)}, 0);
  }, " two blocks, two steps"));
  cs.push_back(one_output("matmul", {{2, 3, 4}, {4, 5}}, [](const Vs& x) { return matmul(x[0], x[1]); }, " folded"));
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    Shape sa = ta ? Shape{2, 4, 3} : Shape{2, 3, 4};
    Shape sb = tb ? Shape{2, 5, 4} : Shape{2, 4, 5};
    std::string note = std::string(" batched ") + (ta ? "T" : "N") + (tb ? "T" : "N");
    cs.push_back(
        one_output("matmul", {sa, sb}, [ta, tb](const Vs& x) { return matmul(x[0], x[1], ta, tb); }, note));
  }
}

void add_index_and_shape(std::vector<GradCase>& cs) {
  const std::vector<int32_t> ids = {1, 4, 1, 0, 5, 1};  // repeated ids exercise the scatter-add
  cs.push_back(one_output("embedding", {{6, 4}},
                          [ids](const Vs& x) { return embedding(x[0], ids.data(), Shape{2, 3}); }, " ids (2,3)"));
  const std::vector<int32_t> labels = {0, 4, 2, 2};
  cs.push_back(one_output("pick", {{4, 5}}, [labels](const Vs& x) { return pick(x[0], labels.data()); }));
  const std::vector<uint8_t> mask = {0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1};
  cs.push_back(one_output("masked_fill", {{2, 3, 4}},
                          [mask](const Vs& x) { return masked_fill(x[0], mask.data(), Shape{3, 4}, -7.0); },
                          " mask (3,4)"));
  cs.push_back(one_output("reshape", {{2, 3, 4}}, [](const Vs& x) { return square(reshape(x[0], Shape{6, 4})); },
                          " -> (6,4), then square"));
  cs.push_back(one_output("slice", {{3, 5, 2}}, [](const Vs& x) { return slice(x[0], 1, 1, 3); }, " axis 1 [1,4)"));
  cs.push_back(one_output("slice", {{4, 3}}, [](const Vs& x) { return slice(x[0], 0, 2, 2); }, " axis 0 [2,4)"));
  // rows is a view: square it so that the check sees a record between the view and the loss.
  cs.push_back(one_output("rows", {{4, 3}}, [](const Vs& x) { return square(rows(x[0], 1, 2)); }, " [1,3) of 4"));
  cs.push_back(one_output("slice_stacked", {{2, 5, 3}, {2, 5, 3}},
                          [](const Vs& x) { return slice_stacked(x.data(), 2, 1, 3, 1); }, " axis 1 [3,4) of two"));
  cs.push_back(one_output("concat", {{2, 3}, {2, 1}, {2, 4}},
                          [](const Vs& x) { return concat({x[0], x[1], x[2]}, 1); }, " axis 1"));
  cs.push_back(one_output("concat", {{1, 3}, {2, 3}}, [](const Vs& x) { return concat({x[0], x[1]}, 0); }, " axis 0"));
  cs.push_back(one_output("transpose", {{2, 3, 4}}, [](const Vs& x) { return transpose(x[0]); }));
  cs.push_back(one_output("dropout", {{4, 6}},
                          [](const Vs& x) { return dropout(x[0], 0.3, CounterRng(7, 1), true); }, " p=0.3"));
}

void add_lstm(std::vector<GradCase>& cs) {
  for (auto [B, H] : {std::pair{1, 1}, std::pair{3, 4}}) {
    GradCase c;
    c.op = "lstm_cell";
    c.inputs = {Shape{B, 4 * H}, Shape{B, H}};
    c.shape = shape_list(c.inputs, ", ") + " -> h, c";
    c.build = [](const Vs& x) {
      auto [h, cell] = lstm_cell(x[0], x[1]);
      return Vs{h, cell};
    };
    cs.push_back(c);
  }
}
void add_output(std::vector<GradCase>& cs) {
  const std::vector<int32_t> labels = {3, 0, 6, 6, 1, 2};
  cs.push_back(one_output("linear_log_softmax_pick", {{2, 3, 5}, {5, 7}, {7}},
                          [labels](const Vs& x) { return linear_log_softmax_pick(x[0], x[1], x[2], labels.data()); },
                          " 6 labels"));
  std::vector<int32_t> many(300);
  for (size_t i = 0; i < many.size(); ++i) many[i] = int32_t(i * 7 % 4);
  for (auto [mode, what] : {std::pair{OutputLogits::keep, "kept"}, {OutputLogits::recompute, "recomputed"}})
    cs.push_back(one_output(
        "linear_log_softmax_pick", {{300, 3}, {3, 4}, {4}},
        [many, mode](const Vs& x) { return linear_log_softmax_pick(x[0], x[1], x[2], many.data(), mode); },
        fmt::format(" 300 rows (2 chunks, logits {})", what)));
  // W and b as views of one (H+1, V) leaf, b its last row, as a Linear's parameters lie in the store: the backward
  // pass then forms db as the extra row of the dW GEMM (kernels::add_linear_grads).
  cs.push_back(one_output(
      "linear_log_softmax_pick", {{300, 3}, {4, 4}},
      [many](const Vs& x) {
        Tape<double>& tape = *x[1].tape;
        double* grad = x[1].grad();
        Var<double> W = tape.external(Shape{3, 4}, x[1].val(), grad);
        Var<double> b = tape.external(Shape{4}, x[1].val() + 12, grad ? grad + 12 : nullptr);
        return linear_log_softmax_pick(x[0], W, b, many.data());
      },
      " 300 rows, W and b one block (db from the dW GEMM)"));
  // The enumerated objective: lw enters unnormalised in the small case (the op does not need log-probabilities),
  // and as log-probabilities (through log_softmax) in the 3-chunk case, as in training, which keeps |J| small
  // enough for the differences' rounding. The weights c include 0 (a padded token) and a non-unit value.
  // S = 100: two queries a chunk, so three chunks for N = 5.
  for (auto [kind, what] : {std::pair{EnumeratedObjective::marginal, " marginal"}, {EnumeratedObjective::expected,
                                                                                    " expected"}}) {
    const std::vector<int32_t> y4 = {2, 0, 4, 1};
    const std::vector<double> c4 = {1.0, 0.0, 0.7, 1.0};
    cs.push_back(one_output("enumerated_output_objective", {{2, 2, 3, 6}, {6, 5}, {5}, {2, 2, 3}},
                            [y4, c4, kind](const Vs& x) {
                              return enumerated_output_objective(x[0], x[1], x[2], x[3], y4.data(), c4.data(), kind);
                            },
                            what));
    const std::vector<int32_t> y5 = {1, 3, 0, 2, 3};
    const std::vector<double> c5 = {1.0, 1.0, 0.5, 1.0, 2.0};
    cs.push_back(one_output("enumerated_output_objective", {{5, 100, 3}, {3, 4}, {4}, {5, 100}},
                            [y5, c5, kind](const Vs& x) {
                              return enumerated_output_objective(x[0], x[1], x[2], log_softmax(x[3], -1), y5.data(),
                                                                 c5.data(), kind);
                            },
                            std::string(what) + ", 3 chunks, lw = log_softmax"));
  }
  cs.push_back(one_output("pair_add", {{2, 3, 4}, {2, 5, 4}}, [](const Vs& x) { return pair_add(x[0], x[1]); }));
  cs.push_back(one_output("mlp_attention_scores", {{2, 3, 11}, {2, 5, 11}, {11, 1}},
                          [](const Vs& x) { return mlp_attention_scores(x[0], x[1], x[2]); }));
  cs.push_back(one_output("mlp_attention_scores", {{3, 1, 20}, {3, 4, 20}, {20}},
                          [](const Vs& x) { return mlp_attention_scores(x[0], x[1], x[2]); }, " one query"));
}
}  // namespace

void add_layernorm_grad_cases(std::vector<GradCase>& cs);  // layer_norm (gradcheck_cases_layernorm.cpp)
void add_sparse_grad_cases(std::vector<GradCase>& cs);  // sparsemax, entmax15 and their support objectives

std::vector<GradCase> op_grad_cases() {
  std::vector<GradCase> cs;
  add_binary(cs);
  add_unary(cs);
  add_axis_ops(cs);
  add_matmul(cs);
  add_index_and_shape(cs);
  add_lstm(cs);
  add_output(cs);
  add_layernorm_grad_cases(cs);
  add_sparse_grad_cases(cs);
  return cs;
}

}  // namespace lava
