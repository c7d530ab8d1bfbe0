// Every op's backward against 4-point central differences in double precision (relative error ≤ 1e-6).
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/rng.hpp"
#include "prob/gradcheck_cases.hpp"

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
                         "transpose", "dropout", "lstm_cell", "linear_log_softmax_pick", "enumerated_output_objective", "pair_add",
                         "mlp_attention_scores", "matmul_packed_weight", "sparsemax", "entmax15",
                         "support_marginal_objective", "support_elbo_objective"})
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

TEST_CASE("linear_log_softmax_pick: kept and recomputed logits give the same bits (float, 3 chunks)") {
  // The logits cache (--logits-cache-mb) may only trade memory for time: both backward paths form
  // p = exp(l − m)·exp(m − lse) from bit-identical logits, so values and every gradient must agree exactly.
  const int64_t R = 600, H = 16, V = 50;
  std::vector<int32_t> labels(R);
  for (int64_t r = 0; r < R; ++r) labels[size_t(r)] = int32_t((r * 13) % V);
  auto run = [&](OutputLogits mode) {
    Tape<float> tape;
    std::vector<float> xv(static_cast<size_t>(R * H)), wv(static_cast<size_t>(H * V)), bv(static_cast<size_t>(V));
    CounterRng rng(3, 0);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(rng.normal(i));
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = float(rng.normal(10000 + i));
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = float(rng.normal(20000 + i));
    Var<float> x = tape.input(Shape{R, H}, xv.data(), true), W = tape.input(Shape{H, V}, wv.data(), true),
               b = tape.input(Shape{V}, bv.data(), true);
    Var<float> out = linear_log_softmax_pick(x, W, b, labels.data(), mode);
    tape.backward(sum_all(mul(out, out)));  // a non-uniform dout
    std::vector<float> all(out.val(), out.val() + R);
    all.insert(all.end(), x.grad(), x.grad() + R * H);
    all.insert(all.end(), W.grad(), W.grad() + H * V);
    all.insert(all.end(), b.grad(), b.grad() + V);
    return all;
  };
  const auto kept = run(OutputLogits::keep), recomputed = run(OutputLogits::recompute);
  REQUIRE(kept.size() == recomputed.size());
  CHECK(std::memcmp(kept.data(), recomputed.data(), kept.size() * sizeof(float)) == 0);
  set_logits_cache_mb(0);  // automatic with no cache = recompute
  CHECK(run(OutputLogits::automatic) == recomputed);
  for (int64_t chunks : {1, 2}) {  // a cache that holds the first chunk or two of the three: kept, then recomputed
    CAPTURE(chunks);
    set_logits_cache_bytes(chunks * 256 * V * int64_t(sizeof(float)) + 100);
    CHECK(run(OutputLogits::automatic) == recomputed);
  }
  set_logits_cache_mb(kDefaultLogitsCacheMb);
}
