// The fused additive attention scorer against the graph it replaces, pair_add → tanh → matmul(·, v): the same
// scores and gradients (double, to rounding), and the same bits with one and two threads (float).
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/rng.hpp"
#include "normal_draws.hpp"

using namespace lava;

namespace {

// Scores and the gradients of q, k and v for the loss Σ w ⊙ s (w a fixed random weight per score).
template <class T>
std::vector<T> scores_and_grads(bool fused, int64_t B, int64_t Tn, int64_t S, int64_t A) {
  Tape<T> tape;
  NormalDraws<T> draw{CounterRng(11, 0)};
  std::vector<T> qv = draw(B * Tn * A), kv = draw(B * S * A), vv = draw(A), wv = draw(B * Tn * S);
  Var<T> q = tape.input(Shape{B, Tn, A}, qv.data(), true), k = tape.input(Shape{B, S, A}, kv.data(), true);
  Var<T> v = tape.input(Shape{A, 1}, vv.data(), true), w = tape.input(Shape{B, Tn, S}, wv.data());
  Var<T> s = fused ? mlp_attention_scores(q, k, v)
                   : reshape(matmul(tanh(pair_add(q, k)), v), Shape{B, Tn, S});
  tape.backward(sum_all(mul(s, w)));
  std::vector<T> all(s.val(), s.val() + s.numel());
  all.insert(all.end(), q.grad(), q.grad() + q.numel());
  all.insert(all.end(), k.grad(), k.grad() + k.numel());
  all.insert(all.end(), v.grad(), v.grad() + v.numel());
  return all;
}

}  // namespace

TEST_CASE("mlp_attention_scores: the scores and gradients of pair_add → tanh → matmul(·, v)") {
  for (const std::array<int64_t, 4>& shape : {std::array<int64_t, 4>{2, 3, 5, 7}, {4, 1, 20, 64}, {3, 6, 9, 33}}) {
    const int64_t B = shape[0], Tn = shape[1], S = shape[2], A = shape[3];
    INFO("B ", B, " T ", Tn, " S ", S, " A ", A);
    const auto fused = scores_and_grads<double>(true, B, Tn, S, A);
    const auto graph = scores_and_grads<double>(false, B, Tn, S, A);
    REQUIRE(fused.size() == graph.size());
    double worst = 0;
    for (size_t i = 0; i < fused.size(); ++i)
      worst = std::max(worst, std::abs(fused[i] - graph[i]) / (1e-12 + std::abs(graph[i])));
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("mlp_attention_scores: one and two threads give the same bits (float, large enough to split)") {
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = scores_and_grads<float>(true, 8, 4, 20, 128);
  omp_set_num_threads(2);
  const auto two = scores_and_grads<float>(true, 8, 4, 20, 128);
  omp_set_num_threads(before);
  REQUIRE(one.size() == two.size());
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}
