// Gradient-check cases for layer_norm (autodiff/ops_layernorm.hpp), appended to the catalogue by all_grad_cases().
// Rows of H = 1 are left out: the normalised value is identically 0 there and ε dominates the derivative.
#include <vector>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops_layernorm.hpp"

namespace lava {

namespace {
using V = Var<double>;
using Vs = std::vector<V>;

GradCase layer_norm_case(std::vector<Shape> in, std::string note, double eps) {
  GradCase c;
  c.op = "layer_norm";
  for (size_t i = 0; i < in.size(); ++i) c.shape += (i ? ", " : "") + in[i].str();
  c.shape += note;
  c.inputs = std::move(in);
  c.build = [eps](const Vs& x) { return Vs{layer_norm(x[0], x[1], x[2], eps)}; };
  return c;
}
}  // namespace

void add_layernorm_grad_cases(std::vector<GradCase>& cs) {
  cs.push_back(layer_norm_case({{3, 5}, {5}, {5}}, "", 1e-5));
  cs.push_back(layer_norm_case({{2, 3, 8}, {8}, {8}}, " (rank 3)", 1e-5));
  cs.push_back(layer_norm_case({{4, 2}, {2}, {2}}, " (H = 2, ε = 0.1)", 0.1));
}

}  // namespace lava
