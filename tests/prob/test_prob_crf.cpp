// The linear-chain CRF of src/prob: log-partition, marginals and the log-partition's gradient against brute-force
// enumeration of every labelling on short chains, and marginals that are probabilities with zeros in the padding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "autodiff/ops.hpp"
#include "prob/linear_chain_crf.hpp"

using namespace lava;

namespace {
using V = Var<double>;
}  // namespace

namespace {

// Exact CRF quantities by enumerating all K^L labellings of one chain (u: (N, K), θ_i = pw(i): (K, K)).
struct BruteCrf {
  double log_z = 0;
  std::vector<double> unary;  // (N, K) marginals, 0 beyond L
  std::vector<double> pair;   // (N−1, K, K) pairwise marginals, 0 beyond L−1
};

BruteCrf brute_crf(const double* u, const std::function<const double*(int64_t)>& pw, int64_t L, int64_t N,
                   int64_t K) {
  BruteCrf r;
  r.unary.assign(size_t(N * K), 0);
  r.pair.assign(size_t(std::max<int64_t>(N - 1, 0) * K * K), 0);
  int64_t count = 1;
  for (int64_t i = 0; i < L; ++i) count *= K;
  std::vector<double> scores(static_cast<size_t>(count));
  std::vector<int64_t> z(static_cast<size_t>(L));
  double m = -1e300;
  for (int64_t code = 0; code < count; ++code) {
    for (int64_t i = 0, c = code; i < L; ++i, c /= K) z[size_t(i)] = c % K;
    double s = 0;
    for (int64_t i = 0; i < L; ++i) s += u[i * K + z[size_t(i)]];
    for (int64_t i = 0; i + 1 < L; ++i) s += pw(i)[z[size_t(i)] * K + z[size_t(i + 1)]];
    scores[size_t(code)] = s;
    m = std::max(m, s);
  }
  double total = 0;
  for (double s : scores) total += std::exp(s - m);
  r.log_z = m + std::log(total);
  for (int64_t code = 0; code < count; ++code) {
    for (int64_t i = 0, c = code; i < L; ++i, c /= K) z[size_t(i)] = c % K;
    const double p = std::exp(scores[size_t(code)] - r.log_z);
    for (int64_t i = 0; i < L; ++i) r.unary[size_t(i * K + z[size_t(i)])] += p;
    for (int64_t i = 0; i + 1 < L; ++i) r.pair[size_t((i * K + z[size_t(i)]) * K + z[size_t(i + 1)])] += p;
  }
  return r;
}

std::vector<double> uniform_values(int64_t n, double lo, double hi, uint64_t stream) {
  const CounterRng rng(13, stream);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = lo + (hi - lo) * rng.uniform(uint64_t(i));
  return v;
}

}  // namespace

TEST_CASE("prob: CRF log-partition, marginals and the log-partition's gradient match brute-force enumeration") {
  struct Setup {
    int64_t B, N, K;
    bool shared;
    std::vector<int32_t> lengths;
    double scale;  // scores drawn from [−scale, scale]
  };
  const Setup setups[] = {{3, 6, 2, false, {6, 3, 1}, 2},   {2, 6, 2, true, {}, 2},     {2, 4, 3, true, {4, 2}, 2},
                          {2, 5, 3, false, {5, 0}, 2},      {1, 1, 2, true, {}, 2},     {2, 6, 2, false, {6, 5}, 800}};
  Tape<double> tape;  // reused: after reset() the arena hands out memory that holds the previous setup's numbers
  for (const Setup& st : setups) {
    const int64_t B = st.B, N = st.N, K = st.K, KK = K * K;
    CAPTURE(N);
    CAPTURE(K);
    CAPTURE(st.shared);
    CAPTURE(st.scale);
    const Shape su{B, N, K}, sp = st.shared ? Shape{K, K} : Shape{B, N - 1, K, K};
    const std::vector<double> u = uniform_values(su.numel(), -st.scale, st.scale, 1);
    const std::vector<double> p = uniform_values(sp.numel(), -st.scale, st.scale, 2);
    const int32_t* lens = st.lengths.empty() ? nullptr : st.lengths.data();
    tape.reset();
    V uv = tape.input(su, u.data(), true), pv = tape.input(sp, p.data(), true);
    V log_z = crf_log_partition(uv, pv, lens);
    tape.backward(sum_all(log_z));
    V mu;
    {
      NoGrad<double> off(tape);
      mu = crf_marginals(uv, pv, lens);
    }
    std::vector<double> shared_pair(size_t(KK), 0);
    double worst = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t L = lens ? lens[b] : N;
      auto pw = [&](int64_t i) { return p.data() + (st.shared ? 0 : (b * (N - 1) + i) * KK); };
      const BruteCrf bf = brute_crf(u.data() + b * N * K, pw, L, N, K);
      worst = std::max(worst, std::abs(log_z.val()[b] - bf.log_z) / std::max(1.0, std::abs(bf.log_z)));
      for (int64_t i = 0; i < N * K; ++i) {
        worst = std::max(worst, std::abs(mu.val()[b * N * K + i] - bf.unary[size_t(i)]));
        worst = std::max(worst, std::abs(uv.grad()[b * N * K + i] - bf.unary[size_t(i)]));
      }
      for (int64_t i = 0; i < (N - 1) * KK; ++i) {
        if (st.shared)
          shared_pair[size_t(i % KK)] += bf.pair[size_t(i)];
        else
          worst = std::max(worst, std::abs(pv.grad()[b * (N - 1) * KK + i] - bf.pair[size_t(i)]));
      }
    }
    for (int64_t i = 0; st.shared && i < KK; ++i)
      worst = std::max(worst, std::abs(pv.grad()[i] - shared_pair[size_t(i)]));
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("prob: CRF marginals are probabilities that sum to 1 inside each chain and are 0 in the padding") {
  const int64_t B = 4, N = 30, K = 2;
  const std::vector<double> u = uniform_values(B * N * K, -300, 300, 3), p = uniform_values(K * K, -50, 50, 4);
  const std::vector<int32_t> lens = {30, 17, 1, 0};
  Tape<double> tape;
  V mu = crf_marginals(tape.input(Shape{B, N, K}, u.data()), tape.input(Shape{K, K}, p.data()), lens.data());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i) {
      const double* m = mu.val() + (b * N + i) * K;
      CHECK(m[0] >= 0);
      CHECK(m[1] >= 0);
      CHECK(m[0] + m[1] == doctest::Approx(i < lens[size_t(b)] ? 1.0 : 0.0).epsilon(1e-12));
    }
}
