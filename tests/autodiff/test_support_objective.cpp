// support_marginal_objective and support_elbo_objective (the output objectives over the support of sparse weights)
// against the dense computations they replace: enumerated_output_objective over every position, with log-weights
// −inf off the support, and a brute force that evaluates every position's output softmax. The same value and the
// same gradients (double, to rounding); the weights' gradient on the support against its formula; the output layer
// costing 2·M·H·V flops (M support rows) instead of 2·N·S·H·V; support sizes; one and two threads (float).
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/rng.hpp"
#include "gemm/gemm.hpp"
#include "normal_draws.hpp"
#include "support/skip_unless.hpp"

using namespace lava;

namespace {

struct Problem {
  int64_t N, S, H, V;
};

// Inputs: rows x (N, S, H), W (H, V), b (V), attention scores and prior scores (N, S), labels, token weights c (one
// padded token, one weighted), and a mask hiding the last two positions of every third query.
template <class T>
struct Inputs {
  std::vector<T> x, W, b, scores, prior;
  std::vector<int32_t> y;
  std::vector<T> c;
  std::vector<uint8_t> mask;
  explicit Inputs(const Problem& p) {
    NormalDraws<T> draw{CounterRng(9, 0)};
    x = draw(p.N * p.S * p.H), W = draw(p.H * p.V), b = draw(p.V), scores = draw(p.N * p.S), prior = draw(p.N * p.S);
    for (T& s : scores) s *= T(1.5);
    mask.assign(size_t(p.N * p.S), 0);
    for (int64_t n = 0; n < p.N; ++n) {
      y.push_back(int32_t((n * 5 + 2) % p.V));
      c.push_back(n == 2 ? T(0) : n == 3 ? T(0.5) : T(1));
      if (n % 3 == 0) mask[size_t(n * p.S + p.S - 1)] = mask[size_t(n * p.S + p.S - 2)] = 1;
    }
  }
};

enum class Kind { marginal, elbo };

struct Result {
  double J;
  std::vector<double> per_query, dx, dW, db, dw, dlp;  // dw: the weights' gradient (sparse op only)
  std::vector<int32_t> support;
};

template <class T>
std::vector<double> copy(const T* v, int64_t n) {
  return v ? std::vector<double>(v, v + n) : std::vector<double>{};
}

// −0.37·J and its gradients, by the support op (sparse) or enumerated_output_objective over all positions (dense),
// with weights w = sparsemax or entmax15 of the masked scores (a constant for the dense op, which takes log w).
template <class T>
Result run(const Problem& p, const Inputs<T>& in, Kind kind, bool sparse, bool entmax) {
  const auto [N, S, H, V] = p;
  Tape<T> tape;
  Var<T> x = tape.input(Shape{N, S, H}, in.x.data(), true), W = tape.input(Shape{H, V}, in.W.data(), true);
  Var<T> b = tape.input(Shape{V}, in.b.data(), true), w = tape.input(Shape{N, S}, in.scores.data(), sparse);
  Var<T> lp = log_softmax(tape.input(Shape{N, S}, in.prior.data(), sparse), -1);
  w = entmax ? entmax15(w, in.mask.data()) : sparsemax(w, in.mask.data());
  Result r;
  r.per_query.resize(size_t(N)), r.support.resize(size_t(N));
  std::vector<T> phi(static_cast<size_t>(N));
  Var<T> J;
  if (sparse) {
    J = kind == Kind::marginal
            ? support_marginal_objective(x, W, b, w, in.y.data(), in.c.data(), phi.data(), r.support.data())
            : support_elbo_objective(x, W, b, w, lp, in.y.data(), in.c.data(), phi.data(), r.support.data());
  } else {
    std::vector<T> lw(size_t(N * S));
    for (size_t i = 0; i < lw.size(); ++i) lw[i] = std::log(w.val()[i]);  // −inf off the support
    const auto enumerated = kind == Kind::marginal ? EnumeratedObjective::marginal : EnumeratedObjective::expected;
    J = enumerated_output_objective(x, W, b, tape.input(Shape{N, S}, lw.data()), in.y.data(), in.c.data(),
                                    enumerated, phi.data());
  }
  r.J = double(J.item());
  r.per_query.assign(phi.begin(), phi.end());
  const T seed = T(-0.37);
  tape.backward_seeded(&J, std::vector<const T*>{&seed}.data(), 1);
  r.dx = copy(x.grad(), x.numel()), r.dW = copy(W.grad(), W.numel()), r.db = copy(b.grad(), b.numel());
  if (sparse) r.dw = copy(w.grad(), w.numel()), r.dlp = copy(lp.grad(), lp.numel());
  return r;
}

void check_close(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-12) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(tol));
}

// log f[n, s] = log_softmax(x[n, s] W + b)[y_n] for every position, in double.
std::vector<double> brute_log_f(const Problem& p, const Inputs<double>& in) {
  std::vector<double> logf;
  for (int64_t r = 0; r < p.N * p.S; ++r) {
    std::vector<double> l(in.b);
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t v = 0; v < p.V; ++v) l[size_t(v)] += in.x[size_t(r * p.H + h)] * in.W[size_t(h * p.V + v)];
    double m = -INFINITY, z = 0;
    for (double e : l) m = std::max(m, e);
    for (double e : l) z += std::exp(e - m);
    logf.push_back(l[size_t(in.y[size_t(r / p.S)])] - m - std::log(z));
  }
  return logf;
}

// The weights the run used (sparsemax or entmax15 of the masked scores) and the prior's log-probabilities.
std::pair<std::vector<double>, std::vector<double>> weights(const Problem& p, const Inputs<double>& in, bool entmax) {
  Tape<double> tape;
  Var<double> s = tape.input(Shape{p.N, p.S}, in.scores.data());
  Var<double> w = entmax ? entmax15(s, in.mask.data()) : sparsemax(s, in.mask.data());
  Var<double> lp = log_softmax(tape.input(Shape{p.N, p.S}, in.prior.data()), -1);
  return {copy(w.val(), w.numel()), copy(lp.val(), lp.numel())};
}

}  // namespace

TEST_CASE("support objectives: the dense marginal's and ELBO's value and gradients, and a brute force (double)") {
  const Problem p{7, 6, 5, 13};
  const Inputs<double> in(p);
  const std::vector<double> logf = brute_log_f(p, in);
  for (bool entmax : {false, true})
    for (Kind kind : {Kind::marginal, Kind::elbo}) {
      INFO("entmax ", entmax, " elbo ", kind == Kind::elbo);
      const Result sp = run(p, in, kind, true, entmax), dense = run(p, in, kind, false, entmax);
      const auto [w, lp] = weights(p, in, entmax);
      int64_t M = 0;
      double J = 0;
      for (int64_t n = 0; n < p.N; ++n) {
        double z = 0, kl = 0, expected = 0;  // Σ w f, KL(w‖p), E_w[log f] over the support, by hand
        int32_t k = 0;
        for (int64_t s = 0; s < p.S; ++s) {
          const size_t i = size_t(n * p.S + s);
          if (w[i] <= 0) continue;
          ++k, z += w[i] * std::exp(logf[i]), kl += w[i] * (std::log(w[i]) - lp[i]), expected += w[i] * logf[i];
        }
        const double phi = kind == Kind::marginal ? std::log(z) : expected - kl;
        CHECK(sp.per_query[size_t(n)] == doctest::Approx(phi).epsilon(1e-12));
        CHECK(sp.support[size_t(n)] == k);
        M += k;
        J += in.c[size_t(n)] * phi;
        for (int64_t s = 0; s < p.S; ++s) {  // the weights' gradient: on the support only
          const size_t i = size_t(n * p.S + s);
          const double g = -0.37 * in.c[size_t(n)];
          const double want = w[i] <= 0 ? 0
                              : kind == Kind::marginal ? g * std::exp(logf[i]) / z
                                                       : g * (logf[i] - std::log(w[i]) - 1 + lp[i]);
          CHECK(sp.dw[i] == doctest::Approx(want).epsilon(1e-12));
          if (kind == Kind::elbo) CHECK(sp.dlp[i] == doctest::Approx(g * w[i]).epsilon(1e-12));
        }
      }
      CHECK(M < p.N * p.S);  // the weights are sparse, so the comparison covers skipped positions
      CHECK(sp.J == doctest::Approx(J).epsilon(1e-12));
      // The dense op's Φ: the marginal is the same; the expectation E_w[log f] lacks the KL term.
      if (kind == Kind::marginal) {
        CHECK(dense.J == doctest::Approx(sp.J).epsilon(1e-12));
        check_close(dense.per_query, sp.per_query);
      }
      // x, W and b enter only through log f, where both objectives weigh it alike (π, or w for the ELBO).
      check_close(sp.dx, dense.dx);
      check_close(sp.dW, dense.dW);
      check_close(sp.db, dense.db);
    }
}

TEST_CASE("support objectives: the output layer runs on the support rows only (GEMM flops)" *
          skip_unless_profiling_build()) {
#if LAVA_PROFILE  // the GEMM work counter exists in the profiling build only
  const Problem p{9, 12, 8, 30};
  const Inputs<double> in(p);
  for (bool entmax : {false, true}) {
    Tape<double> tape;
    NoGrad<double> no_grad(tape);
    Var<double> x = tape.input(Shape{p.N, p.S, p.H}, in.x.data()), W = tape.input(Shape{p.H, p.V}, in.W.data());
    Var<double> b = tape.input(Shape{p.V}, in.b.data()), s = tape.input(Shape{p.N, p.S}, in.scores.data());
    Var<double> w = entmax ? entmax15(s, in.mask.data()) : sparsemax(s, in.mask.data());
    std::vector<int32_t> support(size_t(p.N));
    const unsigned long long before = gemm_flop_count();
    support_marginal_objective(x, W, b, w, in.y.data(), in.c.data(), static_cast<double*>(nullptr), support.data());
    const unsigned long long flops = gemm_flop_count() - before;
    int64_t M = 0;
    for (int32_t k : support) M += k;
    CHECK(M < p.N * p.S);
    CHECK(flops == (unsigned long long)(2 * M * p.H * p.V));
  }
#endif
}

TEST_CASE("support objectives: one and two threads give the same bits (float)") {
  const Problem p{64, 20, 32, 600};
  const Inputs<float> in(p);
  const int before = omp_get_max_threads();
  for (Kind kind : {Kind::marginal, Kind::elbo}) {
    omp_set_num_threads(1);
    const Result one = run(p, in, kind, true, true);
    omp_set_num_threads(2);
    const Result two = run(p, in, kind, true, true);
    CHECK(one.J == two.J);
    for (auto [a, b] : {std::pair{&one.dx, &two.dx}, {&one.dW, &two.dW}, {&one.db, &two.db}, {&one.dw, &two.dw},
                        {&one.per_query, &two.per_query}})
      CHECK(*a == *b);
    CHECK(one.support == two.support);
  }
  omp_set_num_threads(before);
}
