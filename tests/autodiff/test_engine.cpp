// The engine around the ops: tape memory reuse (no heap allocation after the first step), determinism across
// thread counts, parameter store, optimizers, clipping and checkpoints.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/check.hpp"
#include "nn/checkpoint.hpp"
#include "nn/optim.hpp"
#include "nn/params.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

// Counting replacement of the global allocation functions (only counts while g_counting is set). Every
// non-aligned form is replaced, so no allocation made by one allocator is freed by another (ASan checks that). A replaced
// operator new that calls malloc must be paired with free in operator delete; GCC's -Wmismatched-new-delete cannot
// see that both are replaced together, hence the pragma.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return ::operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// A small LSTM language-model step touching most op families; returns the loss.
struct TinyModel {
  ParamStore<float> ps;
  int emb, w_ih, w_hh, bias, w_out;
  static constexpr int V = 50, E = 16, H = 32, B = 4, T = 6;
  TinyModel() {
    emb = ps.add("emb", Shape{V, E});
    w_ih = ps.add("w_ih", Shape{E, 4 * H});
    w_hh = ps.add("w_hh", Shape{H, 4 * H});
    bias = ps.add("bias", Shape{4 * H});
    w_out = ps.add("w_out", Shape{H, V});
    ps.init_uniform(0.1f, 3);
  }
  float step(Tape<float>& tape, uint64_t seed) {
    tape.reset();
    std::vector<int32_t> tokens(B * (T + 1));
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t((i * 7 + seed) % V);
    Var<float> table = ps.var(tape, emb), Wi = ps.var(tape, w_ih), Wh = ps.var(tape, w_hh), b = ps.var(tape, bias);
    Var<float> Wo = ps.var(tape, w_out);
    Var<float> h = tape.full(Shape{B, H}, 0.f), c = tape.full(Shape{B, H}, 0.f);
    Var<float> total = tape.full(Shape{}, 0.f);
    for (int t = 0; t < T; ++t) {
      std::vector<int32_t> in(B), out(B);
      for (int i = 0; i < B; ++i) in[size_t(i)] = tokens[size_t(i * (T + 1) + t)], out[size_t(i)] = tokens[size_t(i * (T + 1) + t + 1)];
      Var<float> x = dropout(embedding(table, in.data(), Shape{B}), 0.2f, CounterRng(seed, uint64_t(t)), true);
      auto hc = lstm_cell(add(add(matmul(x, Wi), matmul(h, Wh)), b), c);
      h = hc.first, c = hc.second;
      Var<float> logp = log_softmax(matmul(h, Wo), -1);
      total = add(total, sum_all(pick(logp, out.data())));
    }
    Var<float> loss = affine(total, -1.f / (B * T), 0.f);
    ps.zero_grad();
    tape.backward(loss);
    return loss.item();
  }
};

}  // namespace

TEST_CASE("tape: after the first step, a training step allocates nothing from the heap") {
  TinyModel m;
  Tape<float> tape;
  Adam<float> adam;
  m.step(tape, 1);
  adam.step(m.ps);
  m.step(tape, 2);  // the arenas consolidate on this reset
  adam.step(m.ps);
  // The step itself builds a few std::vectors of token ids (test scaffolding): count them separately.
  g_allocations = 0;
  g_counting = true;
  std::vector<int32_t> probe(8);
  g_counting = false;
  const long scaffolding_per_vector = g_allocations.load();
  REQUIRE(scaffolding_per_vector == 1);
  const long scaffolding = 1 + 2 * TinyModel::T;  // tokens, then in/out per time step
  g_allocations = 0;
  g_counting = true;
  m.step(tape, 3);
  adam.step(m.ps, clip_factor(grad_norm(m.ps), 1.0f));
  g_counting = false;
  CHECK(g_allocations.load() == scaffolding);
}

TEST_CASE("tape: a step gives the same bits with 1 and 2 threads") {
  auto run = [](int threads) {
    omp_set_num_threads(threads);
    TinyModel m;
    Tape<float> tape;
    Adam<float> adam;
    std::vector<float> losses;
    for (int s = 0; s < 3; ++s) {
      losses.push_back(m.step(tape, uint64_t(s)));
      adam.step(m.ps, clip_factor(grad_norm(m.ps), 0.5f));
    }
    std::vector<float> out(m.ps.values(), m.ps.values() + m.ps.size());
    out.insert(out.end(), losses.begin(), losses.end());
    return out;
  };
  const int saved = omp_get_max_threads();
  std::vector<float> one = run(1), two = run(2);
  omp_set_num_threads(saved);
  REQUIRE(one.size() == two.size());
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}

TEST_CASE("tape: gradients start from zero, though after reset() the arena hands back the last step's gradients") {
  Tape<double> tape;
  const int n = 300000;  // 2.4 MB a node: the first step spreads its nodes over several arena blocks
  std::vector<double> data(n);
  for (int i = 0; i < n; ++i) data[size_t(i)] = 0.001 * (i % 997) - 0.4;
  for (int step = 0; step < 3; ++step) {
    tape.reset();
    Var<double> x = tape.input(Shape{n}, data.data(), true);
    tape.backward(sum_all(mul(mul(x, x), x)));  // dy/dx = 3x²
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += std::abs(x.grad()[i] - 3 * data[size_t(i)] * data[size_t(i)]) > 1e-12;
    CHECK_MESSAGE(bad == 0, "step " << step);
  }
}

TEST_CASE("tape: gradients zeroed in one pass when backward starts, split over 2 threads inside a node's span") {
  // x⁶ as five products: six gradient spans of n doubles (and the sum's one), zeroed together when backward starts;
  // on two threads the split falls inside the third span. Each step reuses the arena memory, and so the gradients,
  // of the step before.
  const int n = 40000;
  std::vector<double> data(n);
  for (int i = 0; i < n; ++i) data[size_t(i)] = 0.002 * (i % 499) - 0.5;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Tape<double> tape;
    for (int step = 0; step < 3; ++step) {
      tape.reset();
      Var<double> x = tape.input(Shape{n}, data.data(), true);
      Var<double> y = x;
      for (int k = 0; k < 5; ++k) y = mul(y, x);
      tape.backward(sum_all(y));  // d(x⁶)/dx = 6x⁵
      int bad = 0;
      for (int i = 0; i < n; ++i) {
        const double v = data[size_t(i)];
        bad += std::abs(x.grad()[i] - 6 * v * v * v * v * v) > 1e-12;
      }
      CHECK_MESSAGE(bad == 0, "threads " << threads << ", step " << step);
    }
  }
  omp_set_num_threads(saved);
}

TEST_CASE("kernels: large reductions, softmax and products are bit-identical with 1 and 2 threads") {
  std::vector<float> x(300 * 257);
  CounterRng rng(5, 0);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(rng.normal(i));
  const std::vector<float> zeros(257, 0.f);
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    Tape<float> tape;
    Var<float> a = tape.input(Shape{300, 257}, x.data(), true), bias = tape.input(Shape{257}, zeros.data(), true);
    Var<float> s = softmax(a, 0), l = logsumexp(a, -1), t = sum_all(a), p = matmul(a, a, true, false);
    // d/dbias of Σ (a + bias) ⊙ a is the column sums of a: a broadcast operand's gradient (2 column blocks)
    Var<float> biased = sum_all(mul(add(a, bias), a));
    Var<float> loss = add(add(add(sum_all(mul(s, a)), sum_all(l)), add(t, mean_all(p))), biased);
    tape.backward(loss);
    std::vector<float> out(a.grad(), a.grad() + a.numel());
    out.insert(out.end(), bias.grad(), bias.grad() + 257);
    out.push_back(loss.item());
    return out;
  };
  const int saved = omp_get_max_threads();
  std::vector<float> one = run(1), two = run(2);
  omp_set_num_threads(saved);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  for (int j = 0; j < 257; ++j) {  // against the column sums in double
    double col = 0;
    for (int r = 0; r < 300; ++r) col += double(x[size_t(r * 257 + j)]);
    CHECK(double(one[size_t(300 * 257 + j)]) == doctest::Approx(col).epsilon(1e-5));
  }
}

TEST_CASE("params: uniform init does not depend on declaration order; Adam and SGD match their formulas") {
  ParamStore<double> a, b;
  a.add("x", Shape{3}), a.add("y", Shape{2});
  b.add("y", Shape{2}), b.add("x", Shape{3});
  a.init_uniform(0.5, 9), b.init_uniform(0.5, 9);
  for (int i = 0; i < 3; ++i) CHECK(a.val(a.find("x"))[i] == b.val(b.find("x"))[i]);
  for (size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a.values()[i]) <= 0.5);

  ParamStore<double> ps;
  ps.add("w", Shape{2});
  ps.val(0)[0] = 1.0, ps.val(0)[1] = -2.0;
  Adam<double> adam;
  adam.lr = 0.1;
  const double g[2] = {0.5, -3.0};
  double m[2] = {0, 0}, v[2] = {0, 0}, w[2] = {1.0, -2.0};
  for (int t = 1; t <= 3; ++t) {
    ps.grad(0)[0] = g[0] * t, ps.grad(0)[1] = g[1] / t;
    adam.step(ps);
    for (int i = 0; i < 2; ++i) {
      const double gi = i == 0 ? g[0] * t : g[1] / t;
      m[i] = 0.9 * m[i] + 0.1 * gi;
      v[i] = 0.999 * v[i] + 0.001 * gi * gi;
      w[i] -= 0.1 * (m[i] / (1 - std::pow(0.9, t))) / (std::sqrt(v[i] / (1 - std::pow(0.999, t))) + 1e-8);
      CHECK(ps.val(0)[i] == doctest::Approx(w[i]).epsilon(1e-12));
    }
  }
  SgdMomentum<double> sgd;
  ps.val(0)[0] = 1.0, ps.grad(0)[0] = 2.0, ps.grad(0)[1] = 0.0;
  sgd.step(ps);
  sgd.step(ps);  // u = 2, then 0.9·2 + 2 = 3.8; w = 1 − 0.1·2 − 0.1·3.8
  CHECK(ps.val(0)[0] == doctest::Approx(1.0 - 0.2 - 0.38).epsilon(1e-12));
}

TEST_CASE("params: clipping by global norm; Adam applies the factor as it reads and consumes the gradients") {
  ParamStore<double> ps;
  ps.add("a", Shape{2}), ps.add("b", Shape{1});
  ps.grads()[0] = 3, ps.grads()[1] = 0, ps.grads()[2] = 4;
  CHECK(grad_norm(ps) == doctest::Approx(5.0).epsilon(1e-15));
  CHECK(clip_factor(5.0, 10.0) == 1.0);
  CHECK(clip_factor(5.0, 1.0) == doctest::Approx(0.2).epsilon(1e-15));
  CHECK(clip_factor(5.0, 0.0) == 1.0);  // max_norm 0: no clipping

  // A store of 100,000 floats (split over threads): Adam with a factor gives the same bits as Adam on gradients
  // scaled beforehand, and leaves every gradient zero.
  auto make = [] {
    ParamStore<float> s;
    s.add("w", Shape{100000});
    s.init_uniform(0.5f, 3);
    return s;
  };
  ParamStore<float> scaled = make(), by_hand = make();
  Adam<float> adam_scaled, adam_by_hand;
  for (int step = 0; step < 2; ++step) {
    for (size_t i = 0; i < scaled.size(); ++i) {
      scaled.grads()[i] = float(std::sin(double(i + 7 * step)));
      by_hand.grads()[i] = scaled.grads()[i] * 0.3f;
    }
    adam_scaled.step(scaled, 0.3f);
    adam_by_hand.step(by_hand);
    CHECK(std::memcmp(scaled.values(), by_hand.values(), scaled.size() * sizeof(float)) == 0);
    CHECK(std::all_of(scaled.grads(), scaled.grads() + scaled.size(), [](float g) { return g == 0.f; }));
  }
}

TEST_CASE("checkpoint: parameters round-trip bit-exactly; mismatches name the file and parameter") {
  ParamStore<float> a;
  a.add("enc/w", Shape{3, 4}), a.add("dec/b", Shape{5});
  a.init_uniform(1.0f, 11);
  const TempDir tmp("ckpt");
  const std::string path = tmp.file("ckpt.safetensors");
  save_params(path, a, {{"model", "tiny"}});
  ParamStore<float> b;
  b.add("enc/w", Shape{3, 4}), b.add("dec/b", Shape{5});
  auto meta = load_params(path, b);
  CHECK(meta.at("model") == "tiny");
  CHECK(std::memcmp(a.values(), b.values(), a.size() * sizeof(float)) == 0);

  ParamStore<float> wrong_shape;
  wrong_shape.add("enc/w", Shape{4, 3}), wrong_shape.add("dec/b", Shape{5});
  try {
    load_params(path, wrong_shape);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);
    CHECK(std::string(e.what()).find("enc/w") != std::string::npos);
  }
  ParamStore<float> extra;
  extra.add("enc/w", Shape{3, 4}), extra.add("dec/b", Shape{5}), extra.add("new", Shape{1});
  CHECK_THROWS_AS(load_params(path, extra), InputError);
  std::remove(path.c_str());
}
