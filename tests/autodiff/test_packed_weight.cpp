// pack_weight + matmul(x, w): the same y and dx bits as matmul(x, W), dW (one GEMM over the stacked rows of all
// products) equal to the sum of the per-product dW to rounding, and no result depends on the thread count;
// matmul_blocks: the bits of one matmul(x_g, w_g) per row block; which of their GEMMs split over threads.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <array>
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

struct Grads {
  std::vector<float> y, dx, dW;
};

// Three recurrent-style products x_u W (u = 0, 1, 2) and the loss Σ_u Σ w_u ⊙ y_u.
Grads run(bool packed, int M, int in, int out) {
  Tape<float> tape;
  NormalDraws<float> draw{CounterRng(5, 0)};
  std::vector<float> wv = draw(int64_t(in) * out);
  Var<float> W = tape.input(Shape{in, out}, wv.data(), true);
  std::vector<std::vector<float>> xv, sv;
  std::vector<Var<float>> xs, terms;
  for (int u = 0; u < 3; ++u) xv.push_back(draw(int64_t(M) * in)), sv.push_back(draw(int64_t(M) * out));
  PackedWeight<float> w;
  if (packed) w = pack_weight(W);
  for (int u = 0; u < 3; ++u) {
    xs.push_back(tape.input(Shape{M, in}, xv[size_t(u)].data(), true));
    Var<float> y = packed ? matmul(xs.back(), w) : matmul(xs.back(), W);
    terms.push_back(sum_all(mul(y, tape.input(Shape{M, out}, sv[size_t(u)].data()))));
  }
  tape.backward(add(add(terms[0], terms[1]), terms[2]));
  Grads g;
  for (int u = 0; u < 3; ++u) g.dx.insert(g.dx.end(), xs[size_t(u)].grad(), xs[size_t(u)].grad() + int64_t(M) * in);
  g.dW.assign(W.grad(), W.grad() + int64_t(in) * out);
  g.y.push_back(terms[0].val()[0]);
  return g;
}

}  // namespace

TEST_CASE("pack_weight: y and dx bits of matmul(x, W); dW to rounding; the same bits with 1 and 2 threads") {
  for (const std::array<int, 3>& shape : {std::array<int, 3>{32, 256, 1024}, {7, 30, 50}, {1, 20, 9}}) {
    const int M = shape[0], in = shape[1], out = shape[2];
    INFO("M ", M, " in ", in, " out ", out);
    const Grads plain = run(false, M, in, out), packed = run(true, M, in, out);
    CHECK(plain.y == packed.y);
    CHECK(std::memcmp(plain.dx.data(), packed.dx.data(), plain.dx.size() * sizeof(float)) == 0);
    double worst = 0;
    for (size_t i = 0; i < plain.dW.size(); ++i)
      worst = std::max(worst, double(std::abs(plain.dW[i] - packed.dW[i])) / (1.0 + std::abs(plain.dW[i])));
    CHECK(worst < 1e-5);
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    const Grads one = run(true, M, in, out);
    omp_set_num_threads(2);
    const Grads two = run(true, M, in, out);
    omp_set_num_threads(before);
    CHECK(std::memcmp(one.dW.data(), two.dW.data(), one.dW.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(one.dx.data(), two.dx.data(), one.dx.size() * sizeof(float)) == 0);
  }
}

namespace {

// Two steps of two row blocks, each block with its own weight: as matmul_blocks (blocks side by side) or as one
// matmul(x_g, w_g) per block. Loss Σ s ⊙ y over both steps.
Grads run_blocks(bool side_by_side, int M, int in, int out) {
  Tape<float> tape;
  NormalDraws<float> draw{CounterRng(6, 0)};
  std::vector<float> w0 = draw(int64_t(in) * out), w1 = draw(int64_t(in) * out);
  Var<float> W[2] = {tape.input(Shape{in, out}, w0.data(), true), tape.input(Shape{in, out}, w1.data(), true)};
  const PackedWeight<float> w[2] = {pack_weight(W[0]), pack_weight(W[1])};
  std::vector<std::vector<float>> xv;
  std::vector<Var<float>> xs, terms;
  for (int u = 0; u < 2; ++u) {
    xv.push_back(draw(int64_t(2 * M) * in));
    xs.push_back(tape.input(Shape{2 * M, in}, xv.back().data(), true));
    Var<float> y = side_by_side ? matmul_blocks(xs.back(), w, 2)
                                : concat({matmul(rows(xs.back(), 0, M), w[0]), matmul(rows(xs.back(), M, M), w[1])}, 0);
    const std::vector<float> sv = draw(int64_t(2 * M) * out);
    terms.push_back(sum_all(mul(y, tape.input(Shape{2 * M, out}, sv.data()))));
  }
  tape.backward(add(terms[0], terms[1]));
  Grads g;
  g.y.push_back(terms[0].val()[0]);
  for (const Var<float>& x : xs) g.dx.insert(g.dx.end(), x.grad(), x.grad() + x.numel());
  for (const Var<float>& Wg : W) g.dW.insert(g.dW.end(), Wg.grad(), Wg.grad() + Wg.numel());
  return g;
}

}  // namespace

TEST_CASE("matmul_blocks: the y, dx and dW bits of one matmul per block, with 1 and 2 threads") {
  const int before = omp_get_max_threads();
  for (const std::array<int, 3>& shape : {std::array<int, 3>{32, 128, 512}, {5, 7, 9}}) {
    const int M = shape[0], in = shape[1], out = shape[2];
    INFO("M ", M, " in ", in, " out ", out);
    omp_set_num_threads(1);
    const Grads apart = run_blocks(false, M, in, out), one = run_blocks(true, M, in, out);
    omp_set_num_threads(2);
    const Grads two = run_blocks(true, M, in, out);
    omp_set_num_threads(before);
    for (const Grads* g : {&one, &two}) {
      CHECK(g->y == apart.y);
      CHECK(std::memcmp(g->dx.data(), apart.dx.data(), apart.dx.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(g->dW.data(), apart.dW.data(), apart.dW.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("matmul(x, w) splits its GEMMs over the threads; matmul_blocks runs each block whole on its own thread" *
          skip_unless_profiling_build()) {
#if LAVA_PROFILE
  // A single product must keep its threads: an OpenMP region whose `if` is false around its GEMM calls made every
  // one of them run on the calling thread alone (a decoder's step products lost their second thread that way).
  // gemm_threaded_flop_count() says which calls were split.
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  const int M = 32, in = 256, out = 1024;
  const double product = 2.0 * M * in * out;
  NormalDraws<float> draw{CounterRng(9, 0)};
  std::vector<float> xv = draw(int64_t(2) * M * in), wv = draw(int64_t(2) * in * out);
  for (int G : {1, 2}) {
    INFO("blocks ", G);
    Tape<float> tape;
    Var<float> x = tape.input(Shape{G * M, in}, xv.data(), true);
    std::vector<PackedWeight<float>> ws;
    for (int g = 0; g < G; ++g)
      ws.push_back(pack_weight(tape.input(Shape{in, out}, wv.data() + int64_t(g) * in * out, true)));
    const unsigned long long all0 = gemm_flop_count(), split0 = gemm_threaded_flop_count();
    Var<float> y = G == 1 ? matmul(x, ws[0]) : matmul_blocks(x, ws.data(), G);
    tape.backward(sum_all(y));
    const double all = double(gemm_flop_count() - all0), split = double(gemm_threaded_flop_count() - split0);
    CHECK(all == 3 * G * product);  // per block: y, dx, and its share of the one dW GEMM per weight
    // One block: all three split over the threads. Two: y and dx whole on a thread each, each weight's dW split.
    CHECK(split == (G == 1 ? 3 : 2) * product);
  }
  omp_set_num_threads(before);
#endif
}
