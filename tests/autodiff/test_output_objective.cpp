// enumerated_output_objective against the graph it replaces, linear_log_softmax_pick followed by the reduction over
// positions (logsumexp for the marginal, Σ exp(lw)·log f for the expectation) and the weighted sum over queries:
// the same value and gradients (double, to rounding, with padded positions, zero-weight tokens, three chunks and an
// upstream gradient ≠ 1); the same bits with one and two threads (float); the same value without gradients; and
// the same gradients when only some inputs need one.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/rng.hpp"
#include "normal_draws.hpp"

using namespace lava;

namespace {

struct Problem {
  int64_t N, S, H, V;
};

struct Run {
  bool fused = true;
  bool need_x = true;  // x needs a gradient (else its slot is left out of the result)
  bool grad = true;    // false: the tape records nothing (NoGrad), and the result is the value alone
};

// The value of −0.37·J + 0.2 and the gradients of x, W, b and lw (in that order), fused or through the graph;
// per_query, if not null, receives the fused op's Φ.
template <class T>
std::vector<T> objective_and_grads(const Run& run, EnumeratedObjective kind, const Problem& p,
                                   std::vector<T>* per_query = nullptr) {
  const auto [N, S, H, V] = p;
  const bool need_x = run.need_x, fused = run.fused;
  Tape<T> tape;
  std::optional<NoGrad<T>> no_grad;
  if (!run.grad) no_grad.emplace(tape);
  NormalDraws<T> draw{CounterRng(5, 0)};
  std::vector<T> xv = draw(N * S * H), wv = draw(H * V), bv = draw(V), lwv = draw(N * S);
  // lw: log-probabilities over the positions, the last positions of every third query padded as in a batch.
  for (int64_t n = 0; n < N; ++n) {
    const int64_t live = n % 3 == 0 ? S - 2 : S;
    T m = -INFINITY, z = 0;
    for (int64_t s = 0; s < live; ++s) m = std::max(m, lwv[size_t(n * S + s)]);
    for (int64_t s = 0; s < live; ++s) z += std::exp(lwv[size_t(n * S + s)] - m);
    for (int64_t s = 0; s < S; ++s) {
      T& l = lwv[size_t(n * S + s)];
      l = s < live ? l - m - std::log(z) : T(-1e9);
    }
  }
  std::vector<int32_t> y(static_cast<size_t>(N)), y_rows(static_cast<size_t>(N * S));
  std::vector<T> c(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    y[size_t(n)] = int32_t((n * 7 + 3) % V);
    c[size_t(n)] = n % 5 == 4 ? T(0) : n == 1 ? T(0.5) : T(1);  // padded tokens and one weighted token
    for (int64_t s = 0; s < S; ++s) y_rows[size_t(n * S + s)] = y[size_t(n)];
  }
  Var<T> x = tape.input(Shape{N, S, H}, xv.data(), need_x), W = tape.input(Shape{H, V}, wv.data(), true);
  Var<T> b = tape.input(Shape{V}, bv.data(), true), lw = tape.input(Shape{N, S}, lwv.data(), true);
  Var<T> J;
  if (fused) {
    J = enumerated_output_objective(x, W, b, lw, y.data(), c.data(), kind, per_query ? per_query->data() : nullptr);
  } else {
    Var<T> logf = linear_log_softmax_pick(x, W, b, y_rows.data());
    Var<T> phi = kind == EnumeratedObjective::marginal ? logsumexp(add(lw, logf), -1) : sum(mul(exp(lw), logf), -1);
    J = sum_all(mul(phi, tape.input(Shape{N}, c.data())));
  }
  Var<T> loss = affine(J, T(-0.37), T(0.2));
  if (tape.grad_enabled()) tape.backward(loss);
  std::vector<T> all = {loss.val()[0]};
  if (!tape.grad_enabled()) return all;
  if (need_x) all.insert(all.end(), x.grad(), x.grad() + x.numel());
  all.insert(all.end(), W.grad(), W.grad() + W.numel());
  all.insert(all.end(), b.grad(), b.grad() + b.numel());
  all.insert(all.end(), lw.grad(), lw.grad() + lw.numel());
  return all;
}

constexpr EnumeratedObjective kKinds[] = {EnumeratedObjective::marginal, EnumeratedObjective::expected};

}  // namespace

TEST_CASE("enumerated_output_objective: the value and gradients of linear_log_softmax_pick + reduction") {
  // S = 30: chunks of 8 queries (240 rows), so N = 20 takes three, the last one short.
  const Problem p{20, 30, 16, 50};
  for (EnumeratedObjective kind : kKinds) {
    const int kind_id = int(kind);
    CAPTURE(kind_id);
    const auto fused = objective_and_grads<double>(Run{}, kind, p);
    const auto graph = objective_and_grads<double>(Run{.fused = false}, kind, p);
    REQUIRE(fused.size() == graph.size());
    double worst = 0, largest = 0;
    for (size_t i = 0; i < fused.size(); ++i) {
      worst = std::max(worst, std::abs(fused[i] - graph[i]) / std::max(1.0, std::abs(graph[i])));
      largest = std::max(largest, std::abs(graph[i]));
    }
    CHECK(worst < 1e-11);
    CHECK(largest > 1e-3);  // the gradients are not all zero
  }
}

TEST_CASE("enumerated_output_objective: one and two threads give the same bits (float)") {
  // Chunks of 12 queries (240 rows), so N = 16 takes two: the first runs query-major on both thread counts, the
  // short second one (4 queries) query-major on one thread and split by rows on two, so the two paths are compared.
  const Problem p{16, 20, 64, 2000};
  const int before = omp_get_max_threads();
  for (EnumeratedObjective kind : kKinds) {
    omp_set_num_threads(1);
    const auto one = objective_and_grads<float>(Run{}, kind, p);
    omp_set_num_threads(2);
    const auto two = objective_and_grads<float>(Run{}, kind, p);
    REQUIRE(one.size() == two.size());
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  }
  omp_set_num_threads(before);
}

TEST_CASE("enumerated_output_objective: without gradients, and with only some inputs needing one") {
  const Problem p{12, 25, 8, 40};
  for (EnumeratedObjective kind : kKinds) {
    std::vector<float> phi(static_cast<size_t>(p.N)), phi_nograd(static_cast<size_t>(p.N));
    const auto full = objective_and_grads<float>(Run{}, kind, p, &phi);
    // The same value and Φ when the tape records nothing (evaluation).
    const auto value = objective_and_grads<float>(Run{.grad = false}, kind, p, &phi_nograd);
    REQUIRE(value.size() == 1);
    CHECK(value[0] == full[0]);
    CHECK(phi_nograd == phi);
    // Everything but x's gradient, bit for bit, when x needs none.
    const auto no_x = objective_and_grads<float>(Run{.need_x = false}, kind, p);
    const size_t x_size = size_t(p.N * p.S * p.H);
    REQUIRE(no_x.size() == full.size() - x_size);
    CHECK(no_x[0] == full[0]);
    CHECK(std::memcmp(no_x.data() + 1, full.data() + 1 + x_size, (no_x.size() - 1) * sizeof(float)) == 0);
    // Φ: the per-query objective, whose weighted sum is J.
    double J = 0;
    for (int64_t n = 0; n < p.N; ++n) J += (n % 5 == 4 ? 0.0 : n == 1 ? 0.5 : 1.0) * phi[size_t(n)];
    CHECK(full[0] == doctest::Approx(-0.37 * J + 0.2).epsilon(1e-6));
  }
}
