// Every op's backward against 4-point central differences in double precision (relative error ≤ 1e-6).
#include <doctest/doctest.h>

#include <set>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"

using namespace lava;

TEST_CASE("gradcheck: every op at every catalogued shape") {
  GradCheckOptions opt;
  std::set<std::string> ops;
  for (const GradCase& c : all_grad_cases()) {
    GradCheckResult r = gradcheck(c, opt);
    INFO(r.op, " ", r.shape, ": max rel err ", r.max_rel_err, ", max abs err ", r.max_abs_err);
    CHECK(r.checked > 0);
    CHECK(r.pass);
    ops.insert(c.op);
  }
  // The catalogue covers the whole op list of autodiff/ops.hpp.
  for (const char* op : {"add", "sub", "mul", "div", "affine", "tanh", "sigmoid", "relu", "exp", "log", "softplus",
                         "lgamma", "digamma", "square", "sum", "mean", "sum_all", "mean_all", "softmax", "log_softmax",
                         "logsumexp", "matmul", "embedding", "pick", "masked_fill", "reshape", "slice", "concat",
                         "transpose", "dropout", "lstm_cell", "linear_log_softmax_pick", "pair_add"})
    CHECK_MESSAGE(ops.count(op) == 1, "no gradient check for ", op);
}

TEST_CASE("gradcheck: a wrong backward is caught") {
  // Same forward as tanh, but the backward claims d tanh/dx = 1: the checker must fail it.
  GradCase c;
  c.op = "broken";
  c.inputs = {Shape{5}};
  c.build = [](const std::vector<Var<double>>& x) {
    Var<double> y = tanh(x[0]);
    Var<double> z = x[0].tape->make_output(y.shape(), x[0]);
    for (int64_t i = 0; i < 5; ++i) z.val()[i] = y.val()[i];
    x[0].tape->on_backward([x0 = x[0], z] {
      for (int64_t i = 0; i < 5; ++i) x0.grad()[i] += z.grad()[i];
    });
    return std::vector<Var<double>>{z};
  };
  GradCheckResult r = gradcheck(c, GradCheckOptions{});
  CHECK_FALSE(r.pass);
  CHECK(r.max_rel_err > 1e-2);
}
