// sparsemax and entmax15 (autodiff/ops.hpp, tensor/kernels_sparsemax.hpp) against their definitions, by brute force:
// sparsemax as the Euclidean projection onto the simplex (every candidate support tried), entmax15 through its
// threshold found by bisection, both through a generic α-entmax by bisection at α = 2 and 1.5, and the α family's
// slopes at uniform scores (softmax 1/n, entmax15 n^{−1/2}, sparsemax 1). Edge cases: ties, one position, all
// scores equal, ties at the threshold, masked positions (by mask, −inf and the masked logit), an empty row; the
// support sizes; the backward pass against central differences in double; one and two threads (float).
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/rng.hpp"
#include "nn/masked_logit.hpp"
#include "normal_draws.hpp"

using namespace lava;

namespace {

enum class Map { sparsemax, entmax15 };

struct Rows {
  std::vector<double> p;
  std::vector<int32_t> support;
};

template <class T = double>
Rows apply(Map map, const std::vector<T>& z, int64_t n, const uint8_t* mask = nullptr) {
  Tape<T> tape;
  const int64_t rows = int64_t(z.size()) / n;
  Var<T> x = tape.input(Shape{rows, n}, z.data());
  Rows out{{}, std::vector<int32_t>(size_t(rows), -1)};
  Var<T> p = map == Map::sparsemax ? sparsemax(x, mask, out.support.data()) : entmax15(x, mask, out.support.data());
  out.p.assign(p.val(), p.val() + p.numel());
  return out;
}

// argmin_{p ∈ simplex} ‖p − z‖² by brute force: on a support S the minimiser is p_S = z_S − (Σ z_S − 1)/|S|, so
// try every S whose p_S is nonnegative and keep the closest.
std::vector<double> projection_brute_force(const std::vector<double>& z) {
  const size_t n = z.size();
  std::vector<double> best;
  double best_dist = INFINITY;
  for (uint32_t set = 1; set < (1u << n); ++set) {
    double sum = 0, k = 0;
    for (size_t i = 0; i < n; ++i)
      if (set >> i & 1) sum += z[i], ++k;
    const double tau = (sum - 1) / k;
    std::vector<double> p(n, 0.0);
    bool feasible = true;
    double dist = 0;
    for (size_t i = 0; i < n; ++i) {
      if (set >> i & 1) p[i] = z[i] - tau, feasible = feasible && p[i] >= 0;
      dist += (p[i] - z[i]) * (p[i] - z[i]);
    }
    if (feasible && dist < best_dist) best_dist = dist, best = p;
  }
  return best;
}

// α-entmax by bisection on τ: p_i = [(α − 1) z_i − τ]_+^{1/(α−1)}, Σ p = 1, τ ∈ [max (α−1)z − 1, max (α−1)z].
std::vector<double> entmax_bisection(const std::vector<double>& z, double alpha) {
  double hi = -INFINITY;
  for (double v : z) hi = std::max(hi, (alpha - 1) * v);
  double lo = hi - 1;
  const auto probs = [&](double tau) {
    std::vector<double> p;
    for (double v : z) p.push_back(std::pow(std::max((alpha - 1) * v - tau, 0.0), 1 / (alpha - 1)));
    return p;
  };
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    double total = 0;
    for (double v : probs(mid)) total += v;
    (total > 1 ? lo : hi) = mid;
  }
  return probs(0.5 * (lo + hi));
}

std::vector<double> draws(uint64_t seed, int64_t n, double scale) {
  NormalDraws<double> draw{CounterRng(seed, 0)};
  std::vector<double> z = draw(n);
  for (double& v : z) v *= scale;
  return z;
}

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-14));
}

int32_t positives(const double* p, int64_t n) {
  int32_t k = 0;
  for (int64_t i = 0; i < n; ++i) k += p[i] > 0;
  return k;
}

}  // namespace

TEST_CASE("sparsemax: the Euclidean projection onto the simplex (brute force over supports)") {
  for (int64_t n : {1, 2, 3, 5, 8, 10})
    for (double scale : {0.1, 0.5, 1.0, 3.0}) {
      const std::vector<double> z = draws(uint64_t(n * 100 + int(scale * 10)), n, scale);
      const Rows got = apply(Map::sparsemax, z, n);
      const std::vector<double> want = projection_brute_force(z);
      for (int64_t i = 0; i < n; ++i) CHECK(got.p[size_t(i)] == doctest::Approx(want[size_t(i)]).epsilon(1e-12));
      CHECK(got.support[0] == positives(want.data(), n));
    }
}

TEST_CASE("entmax15: the threshold against bisection, and α-entmax by bisection at α = 2 is sparsemax") {
  for (int64_t n : {1, 2, 3, 6, 10, 40})
    for (double scale : {0.1, 1.0, 4.0}) {
      const std::vector<double> z = draws(uint64_t(n * 7 + int(scale * 10)), n, scale);
      const Rows ent = apply(Map::entmax15, z, n), sp = apply(Map::sparsemax, z, n);
      const std::vector<double> ent_ref = entmax_bisection(z, 1.5), sp_ref = entmax_bisection(z, 2.0);
      double total = 0;
      for (int64_t i = 0; i < n; ++i) {
        CHECK(std::abs(ent.p[size_t(i)] - ent_ref[size_t(i)]) < 1e-12);
        CHECK(std::abs(sp.p[size_t(i)] - sp_ref[size_t(i)]) < 1e-12);
        total += ent.p[size_t(i)];
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-14));
      CHECK(ent.support[0] == positives(ent_ref.data(), n));
      CHECK(ent.support[0] >= sp.support[0]);  // α = 1.5 is less sparse than α = 2 on the same scores
    }
}

TEST_CASE("sparse normalisers: the α family's slopes at uniform scores (softmax 1/n, entmax15 1/√n, sparsemax 1)") {
  // At z = ε v the Jacobian at the uniform point is p^{2−α} (I − 11ᵀ/n), so p ≈ 1/n + ε p^{2−α} (v − mean v):
  // entmax15 sits between softmax (α → 1) and sparsemax (α = 2), as the family should.
  const int64_t n = 6;
  const std::vector<double> v = draws(3, n, 1.0);
  double mean = 0;
  for (double e : v) mean += e / double(n);
  const double eps = 1e-6;
  std::vector<double> z(v);
  for (double& e : z) e *= eps;
  const Rows sp = apply(Map::sparsemax, z, n), ent = apply(Map::entmax15, z, n);
  Tape<double> tape;
  Var<double> soft = softmax(tape.input(Shape{1, n}, z.data()), -1);
  for (int64_t i = 0; i < n; ++i) {
    const double centred = v[size_t(i)] - mean;
    CHECK((sp.p[size_t(i)] - 1.0 / n) / eps == doctest::Approx(centred).epsilon(1e-6));
    CHECK((ent.p[size_t(i)] - 1.0 / n) / eps == doctest::Approx(centred / std::sqrt(double(n))).epsilon(1e-4));
    CHECK((soft.val()[i] - 1.0 / n) / eps == doctest::Approx(centred / double(n)).epsilon(1e-4));
  }
  CHECK(sp.support[0] == n);
  CHECK(ent.support[0] == n);
}

TEST_CASE("sparse normalisers: ties, one position, all equal, ties at the threshold, one-hot gaps") {
  for (Map map : {Map::sparsemax, Map::entmax15}) {
    const Rows ties = apply(map, std::vector<double>{0.3, -2.0, 0.3, 0.3}, 4);
    check_near(ties.p, {1.0 / 3, 0.0, 1.0 / 3, 1.0 / 3});
    CHECK(ties.support[0] == 3);
    const Rows one = apply(map, std::vector<double>{-7.5}, 1);
    CHECK(one.p == std::vector<double>{1.0});
    CHECK(one.support[0] == 1);
    const Rows equal = apply(map, std::vector<double>(5, 2.25), 5);
    check_near(equal.p, std::vector<double>(5, 0.2));
    CHECK(equal.support[0] == 5);
  }
  // The second score exactly at the threshold: p = (1, 0), support 1 (sparsemax at a gap of 1, entmax15 of 2).
  const Rows sp_edge = apply(Map::sparsemax, std::vector<double>{0.5, -0.5}, 2);
  CHECK(sp_edge.p == std::vector<double>{1.0, 0.0});
  CHECK(sp_edge.support[0] == 1);
  const Rows ent_edge = apply(Map::entmax15, std::vector<double>{1.0, -1.0}, 2);
  CHECK(ent_edge.p == std::vector<double>{1.0, 0.0});
  CHECK(ent_edge.support[0] == 1);
  // Just inside: sparsemax (0, −0.9) = (0.95, 0.05); entmax15 (0, −1.8): √p₁ − √p₂ = 0.9 and p₁ + p₂ = 1.
  const Rows sp_in = apply(Map::sparsemax, std::vector<double>{0.0, -0.9}, 2);
  CHECK(sp_in.p[0] == doctest::Approx(0.95).epsilon(1e-14));
  CHECK(sp_in.p[1] == doctest::Approx(0.05).epsilon(1e-14));
  const Rows ent_in = apply(Map::entmax15, std::vector<double>{0.0, -1.8}, 2);
  CHECK(std::sqrt(ent_in.p[0]) - std::sqrt(ent_in.p[1]) == doctest::Approx(0.9).epsilon(1e-12));
  CHECK(ent_in.p[0] + ent_in.p[1] == doctest::Approx(1.0).epsilon(1e-14));
}

TEST_CASE("sparse normalisers: masked positions (mask, −inf, the masked logit) and an empty row") {
  // Row 0 masks positions 1 and 3 by the mask, row 1 by −inf, row 2 by kMaskedLogit: all equal the 3-position row.
  // Position 1's score is the largest, so a mask that leaked would change everything. Row 3 is fully masked.
  const std::vector<double> live = {0.2, 0.9, -0.1};
  const double inf = INFINITY, ml = double(kMaskedLogit);
  const std::vector<double> z = {0.2, 5.0, 0.9, 5.0, -0.1, 0.2, -inf, 0.9, -inf, -0.1,
                                 0.2, ml,  0.9, ml,  -0.1, 1.0, 2.0,  3.0, 4.0,  5.0};
  std::vector<uint8_t> mask(20, 0);
  mask[1] = mask[3] = 1;
  for (int i = 15; i < 20; ++i) mask[size_t(i)] = 1;
  for (Map map : {Map::sparsemax, Map::entmax15}) {
    const Rows ref = apply(map, live, 3), got = apply(map, z, 5, mask.data());
    for (int64_t r = 0; r < 3; ++r) {
      CHECK(got.p[size_t(r * 5 + 1)] == 0.0);
      CHECK(got.p[size_t(r * 5 + 3)] == 0.0);
      for (int64_t j : {0, 2, 4})
        CHECK(got.p[size_t(r * 5 + j)] == doctest::Approx(ref.p[size_t(j / 2)]).epsilon(1e-12));
      CHECK(got.support[size_t(r)] == ref.support[0]);
    }
    for (int i = 15; i < 20; ++i) CHECK(got.p[size_t(i)] == 0.0);
    CHECK(got.support[3] == 0);
    // The empty row passes no gradient back, and neither do masked positions.
    Tape<double> tape;
    Var<double> x = tape.input(Shape{4, 5}, z.data(), true);
    Var<double> p = map == Map::sparsemax ? sparsemax(x, mask.data()) : entmax15(x, mask.data());
    const std::vector<double> w = draws(11, 20, 1.0);
    tape.backward_seeded(&p, std::vector<const double*>{w.data()}.data(), 1);
    for (int i : {1, 3, 6, 8, 11, 13, 15, 16, 17, 18, 19}) CHECK(x.grad()[i] == 0.0);
  }
}

TEST_CASE("sparse normalisers: the backward pass against central differences (double, random rows)") {
  const int64_t rows = 20, n = 9;
  const std::vector<double> z = draws(21, rows * n, 1.5), w = draws(22, rows * n, 1.0);
  for (Map map : {Map::sparsemax, Map::entmax15}) {
    Tape<double> tape;
    Var<double> x = tape.input(Shape{rows, n}, z.data(), true);
    Var<double> p = map == Map::sparsemax ? sparsemax(x) : entmax15(x);
    tape.backward_seeded(&p, std::vector<const double*>{w.data()}.data(), 1);
    const auto loss = [&](std::vector<double> zz) {
      const Rows r = apply(map, zz, n);
      double L = 0;
      for (size_t i = 0; i < zz.size(); ++i) L += w[i] * r.p[i];
      return L;
    };
    int sparse_rows = 0;
    const Rows at = apply(map, z, n);
    for (int64_t r = 0; r < rows; ++r) sparse_rows += at.support[size_t(r)] < n;
    CHECK(sparse_rows >= rows / 2);  // the check covers zeros, not only dense rows
    const double h = 1e-6;
    for (size_t i = 0; i < z.size(); ++i) {
      std::vector<double> up(z), down(z);
      up[i] += h, down[i] -= h;
      // Skip a coordinate whose step changes the support (a kink between the two points); none should here.
      if (apply(map, up, n).support != at.support || apply(map, down, n).support != at.support) continue;
      CHECK(x.grad()[i] == doctest::Approx((loss(up) - loss(down)) / (2 * h)).epsilon(1e-6));
    }
  }
}

TEST_CASE("sparse normalisers: float agrees with double; one and two threads give the same bits") {
  const int64_t rows = 2000, n = 40;  // rows·n above the parallel threshold
  const std::vector<double> zd = draws(31, rows * n, 2.0);
  std::vector<float> zf(zd.begin(), zd.end());
  const int before = omp_get_max_threads();
  for (Map map : {Map::sparsemax, Map::entmax15}) {
    const Rows dbl = apply<double>(map, std::vector<double>(zf.begin(), zf.end()), n);
    omp_set_num_threads(1);
    const Rows one = apply<float>(map, zf, n);
    omp_set_num_threads(2);
    const Rows two = apply<float>(map, zf, n);
    CHECK(std::memcmp(one.p.data(), two.p.data(), one.p.size() * sizeof(double)) == 0);
    CHECK(one.support == two.support);
    double worst = 0;
    for (size_t i = 0; i < one.p.size(); ++i) worst = std::max(worst, std::abs(one.p[i] - dbl.p[i]));
    CHECK(worst < 1e-6);
  }
  omp_set_num_threads(before);
}
