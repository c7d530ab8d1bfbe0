#include "autodiff/gradcheck.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace lava {

namespace {

// Leaf values: uniform in [lo, hi], moved to at least min_abs in magnitude (keeping the sign).
std::vector<std::vector<double>> draw_inputs(const GradCase& c, uint64_t seed) {
  std::vector<std::vector<double>> xs;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    CounterRng rng(seed, stream_id("gradcheck/input") + k);
    std::vector<double> v(size_t(c.inputs[k].numel()));
    for (size_t i = 0; i < v.size(); ++i) {
      double x = c.lo + (c.hi - c.lo) * rng.uniform(i);
      if (std::abs(x) < c.min_abs) x = x < 0 ? -c.min_abs - std::abs(x) : c.min_abs + std::abs(x);
      v[i] = x;
    }
    xs.push_back(std::move(v));
  }
  return xs;
}

struct Evaluation {
  Tape<double> tape;
  std::vector<Var<double>> leaves, outputs;
};

void run_case(Evaluation& e, const GradCase& c, const std::vector<std::vector<double>>& xs, bool with_grad) {
  e.tape.reset();
  e.tape.set_grad_enabled(with_grad);
  e.leaves.clear();
  for (size_t k = 0; k < xs.size(); ++k) e.leaves.push_back(e.tape.input(c.inputs[k], xs[k].data(), true));
  e.outputs = c.build(e.leaves);
}

// L = Σ_k Σ_i w_k[i] y_k[i], summed in index order.
double contract(const std::vector<Var<double>>& ys, const std::vector<std::vector<double>>& ws) {
  double L = 0;
  for (size_t k = 0; k < ys.size(); ++k)
    for (int64_t i = 0; i < ys[k].numel(); ++i) L += ws[k][size_t(i)] * ys[k].val()[i];
  return L;
}

}  // namespace

GradCheckResult gradcheck(const GradCase& c, const GradCheckOptions& opt) {
  GradCheckResult r{c.op, c.shape};
  std::vector<std::vector<double>> xs = draw_inputs(c, opt.seed);

  // Analytic: forward, then backward seeded with the contraction weights.
  Evaluation e;
  run_case(e, c, xs, true);
  std::vector<std::vector<double>> ws;
  for (size_t k = 0; k < e.outputs.size(); ++k) {
    CounterRng rng(opt.seed, stream_id("gradcheck/weights") + k);
    std::vector<double> w(size_t(e.outputs[k].numel()));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 2 * rng.uniform(i) - 1;
    ws.push_back(std::move(w));
  }
  std::vector<const double*> seeds;
  for (auto& w : ws) seeds.push_back(w.data());
  e.tape.backward_seeded(e.outputs.data(), seeds.data(), int(e.outputs.size()));
  std::vector<std::vector<double>> analytic;
  for (auto& leaf : e.leaves) analytic.emplace_back(leaf.grad(), leaf.grad() + leaf.numel());

  // Numeric: 4-point central differences, coordinate by coordinate.
  Evaluation probe;
  auto loss_at = [&](size_t k, size_t i, double delta) {
    const double saved = xs[k][i];
    xs[k][i] = saved + delta;
    run_case(probe, c, xs, false);
    xs[k][i] = saved;
    return contract(probe.outputs, ws);
  };
  bool finite = true;
  for (size_t k = 0; k < xs.size(); ++k) {
    const int64_t n = int64_t(xs[k].size());
    const int64_t count = std::min(n, opt.max_elems);
    CounterRng pick_rng(opt.seed, stream_id("gradcheck/sample") + k);
    for (int64_t j = 0; j < count; ++j) {
      const size_t i = size_t(count == n ? j : int64_t(pick_rng.below(uint64_t(j), uint64_t(n))));
      const double h = opt.h;
      const double numeric =
          (8 * (loss_at(k, i, h) - loss_at(k, i, -h)) - (loss_at(k, i, 2 * h) - loss_at(k, i, -2 * h))) / (12 * h);
      const double a = analytic[k][i];
      const double abs_err = std::abs(a - numeric);
      const double rel_err = abs_err / std::max({std::abs(a), std::abs(numeric), 1e-3});
      if (!std::isfinite(a) || !std::isfinite(numeric)) finite = false;
      r.max_abs_err = std::max(r.max_abs_err, abs_err);
      r.max_rel_err = std::max(r.max_rel_err, rel_err);
      ++r.checked;
    }
  }
  r.pass = finite && r.max_rel_err <= opt.rel_tol;
  return r;
}

}  // namespace lava
