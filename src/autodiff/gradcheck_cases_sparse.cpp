// Gradient-check cases for the sparse normalisers (sparsemax, entmax15) and the output objectives over their support
// (support_marginal_objective, support_elbo_objective), appended to the catalogue by op_grad_cases().
// Both normalisers have kinks where a score crosses the threshold τ (the support changes there), so their scores
// are not the raw leaves: z = 0.01·x + o, with o a fixed grid of well-separated values (0.45 apart, a different
// order in every row). The leaves move z by at most 0.015, far less than the distance of any o from τ, so the
// support is the same at every point of the finite-difference stencil.
#include <vector>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"

namespace lava {

namespace {
using V = Var<double>;
using Vs = std::vector<V>;

// 0.01·x + o for x (..., n) with n coprime to 3: o[r, j] = 1 − 0.45·((3j + r) mod n).
V off_kink_scores(V x) {
  const int64_t n = x.shape().last(), rows = x.numel() / n;
  std::vector<double> o(size_t(x.numel()));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) o[size_t(r * n + j)] = 1 - 0.45 * double((3 * j + r) % n);
  return add(affine(x, 0.01, 0.0), x.tape->input(x.shape(), o.data()));
}

template <class F>
GradCase sparse_case(std::string op, std::vector<Shape> in, std::string note, F f) {
  GradCase c;
  c.op = std::move(op);
  for (size_t i = 0; i < in.size(); ++i) c.shape += (i ? ", " : "") + in[i].str();
  c.shape += note;
  c.inputs = std::move(in);
  c.build = [f](const Vs& x) { return Vs{f(x)}; };
  return c;
}

// Rows of 7 with positions masked: none, two, all but one (a support of one: zero gradient), and three.
std::vector<uint8_t> mask_4x7() {
  std::vector<uint8_t> m(28, 0);
  m[1] = m[5] = 1;
  for (int j = 0; j < 7; ++j) m[size_t(14 + j)] = j != 3;
  m[21] = m[22] = m[26] = 1;
  return m;
}

using Normaliser = V (*)(V, const uint8_t*, int32_t*);

void add_normaliser(std::vector<GradCase>& cs, const char* name, Normaliser f) {
  for (Shape s : {Shape{1, 5}, Shape{4, 7}, Shape{2, 3, 5}})
    cs.push_back(sparse_case(name, {s}, "", [f](const Vs& x) { return f(off_kink_scores(x[0]), nullptr, nullptr); }));
  const std::vector<uint8_t> mask = mask_4x7();
  cs.push_back(sparse_case(name, {{4, 7}}, " masked", [f, mask](const Vs& x) {
    return f(off_kink_scores(x[0]), mask.data(), nullptr);
  }));
}

void add_support_objectives(std::vector<GradCase>& cs) {
  const std::vector<int32_t> y2 = {4, 1}, y3 = {2, 0, 3};
  const std::vector<double> c2 = {1.0, 0.6}, c3 = {1.0, 0.0, 1.5};  // a padded token (c = 0) and a weighted one
  // Positive weights as leaves: the whole row is the support, so every weight's gradient is checked.
  GradCase dense = sparse_case("support_marginal_objective", {{2, 3, 4}, {4, 5}, {5}, {2, 3}}, " weights > 0",
                               [y2, c2](const Vs& x) {
                                 return support_marginal_objective(x[0], x[1], x[2], x[3], y2.data(), c2.data());
                               });
  dense.lo = 0.1;  // every leaf in [0.1, 1.5]: the weights positive
  cs.push_back(dense);
  for (auto [name, f] : {std::pair{" sparsemax weights", Normaliser(&sparsemax<double>)},
                         {" entmax15 weights", Normaliser(&entmax15<double>)}}) {
    cs.push_back(sparse_case("support_marginal_objective", {{3, 5, 4}, {4, 6}, {6}, {3, 5}}, name,
                             [y3, c3, f](const Vs& x) {
                               V p = f(off_kink_scores(x[3]), nullptr, nullptr);
                               return support_marginal_objective(x[0], x[1], x[2], p, y3.data(), c3.data());
                             }));
    cs.push_back(sparse_case("support_elbo_objective", {{3, 5, 4}, {4, 6}, {6}, {3, 5}, {3, 5}},
                             std::string(name) + ", log p = log_softmax", [y3, c3, f](const Vs& x) {
                               V q = f(off_kink_scores(x[3]), nullptr, nullptr);
                               return support_elbo_objective(x[0], x[1], x[2], q, log_softmax(x[4], -1), y3.data(),
                                                             c3.data());
                             }));
  }
}
}  // namespace

void add_sparse_grad_cases(std::vector<GradCase>& cs) {
  add_normaliser(cs, "sparsemax", &sparsemax<double>);
  add_normaliser(cs, "entmax15", &entmax15<double>);
  add_support_objectives(cs);
}

}  // namespace lava
