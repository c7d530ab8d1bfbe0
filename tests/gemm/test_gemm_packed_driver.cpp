// The packed GEMM driver (gemm_packed.hpp) and the micro-kernel template (ukernel_simd.hpp), instantiated with an
// emulated 16-lane vector so that the AVX-512 tile shape (12×32, masked right edge, 4/8/12-row bottom edge) and both
// loop nests, with tiny blocks, are checked on any CPU: against gemm_naive, and bit-identical across nests, thread
// counts and a B̂ packed beforehand.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gemm/gemm_view.hpp"
#include "gemm_problem.hpp"
#define LAVA_GEMM_ISA_TU 1
#include "gemm/gemm_packed.hpp"
#include "gemm/ukernel_simd.hpp"

namespace {

// 16 float lanes in plain C++ with the interface of the x86 vector types (gemm_avx512.cpp's Zmm).
struct Emu16 {
  using scalar = float;
  static constexpr int W = 16;
  struct reg {
    float x[16];
  };
  using mask = unsigned;
  static reg zero() { return reg{}; }
  static reg set1(float v) {
    reg r;
    std::fill(r.x, r.x + W, v);
    return r;
  }
  static reg load(const float* p) {
    reg r;
    std::memcpy(r.x, p, sizeof r.x);
    return r;
  }
  static reg bcast(const float* p) { return set1(*p); }
  static reg fma(reg a, reg b, reg c) {
    for (int i = 0; i < W; ++i) c.x[i] = std::fma(a.x[i], b.x[i], c.x[i]);
    return c;
  }
  static reg mul(reg a, reg b) {
    for (int i = 0; i < W; ++i) a.x[i] *= b.x[i];
    return a;
  }
  static void store(float* p, reg x) { std::memcpy(p, x.x, sizeof x.x); }
  static mask make_mask(int n) { return n >= W ? 0xFFFFu : (1u << n) - 1u; }
  // Masked-off lanes are never touched, as with the hardware instructions (ASan checks this in CI).
  static reg load_masked(const float* p, mask m) {
    reg r{};
    for (int i = 0; i < W; ++i)
      if ((m >> i) & 1u) r.x[i] = p[i];
    return r;
  }
  static void store_masked(float* p, mask m, reg x) {
    for (int i = 0; i < W; ++i)
      if ((m >> i) & 1u) p[i] = x.x[i];
  }
};

using EmuKernel12x32 = lava::gemm_detail::SimdKernel<Emu16, 12, 2>;

enum class Nest { split_n, split_m, split_n_prepacked };

std::vector<float> run_emulated(const Problem<float>& p, float alpha, float beta, const std::vector<float>& c0,
                                Nest nest, const lava::gemm_detail::PackedBlocking& bl, bool parallel) {
  std::vector<float> c = c0;
  auto v = lava::gemm_detail::make_view(p.ta, p.tb, p.M, p.N, p.K, alpha, p.A.data(), p.lda, p.B.data(), p.ldb,
                                        beta, c.data(), p.ldc);
  std::vector<float> packed;
  if (nest == Nest::split_n_prepacked) {  // B̂ packed once, then read by the same nest
    packed.assign(std::size_t(p.K) * ((p.N + 31) / 32 * 32), std::numeric_limits<float>::quiet_NaN());
    lava::gemm_detail::pack_b_whole<EmuKernel12x32>(v, bl, packed.data(), parallel);
    v.packed_b = packed.data();
  }
  if (nest != Nest::split_m) {
    lava::gemm_detail::gemm_split_n<EmuKernel12x32>(v, bl, parallel);
  } else {
    lava::gemm_detail::gemm_split_m<EmuKernel12x32>(v, bl, parallel);
  }
  return c;
}

}  // namespace

TEST_CASE("gemm packed driver: emulated 12x32 kernel, both loop nests, tiny blocks, bit-identical") {
  // Tiny blocks so that every loop of both nests runs several times: kc ≤ 16, Â blocks of 2 panels, B̂ blocks of
  // 2 strips; strip-major (few_a_panels = 8) and panel-major (few_a_panels = 0) orders of split_n, each also with
  // B̂ packed once beforehand (pack_b_whole, several k blocks and strip groups).
  using lava::gemm_detail::PackedBlocking;
  const PackedBlocking panel_major{16, 24, 64, 0, 2}, strip_major{16, 24, 64, 8, 2};
  const int ms[] = {1, 13, 28}, ns[] = {1, 33, 65}, ks[] = {5, 40};
  TestRng rng{2024};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  int cases = 0;
  for (int M : ms)
    for (int N : ns)
      for (int K : ks)
        for (int t = 0; t < 4; ++t) {
          Problem<float> p(t & 1, t & 2, M, N, K, (M + N + t) % 2 == 0 ? 0 : 3, rng);
          const bool beta_zero = (M + N + K + t) % 2 == 0;
          const float alpha = 0.75f, beta = beta_zero ? 0.0f : -1.25f;
          const std::vector<float> c0 = beta_zero ? nan_filled<float>(p.C.size()) : p.C;
          INFO("M=" << M << " N=" << N << " K=" << K << " trans=" << t);
          const auto ref = run_emulated(p, alpha, beta, c0, Nest::split_n, panel_major, false);
          CHECK(count_mismatches(p, alpha, beta, c0, ref) == 0);
          const std::vector<float> others[] = {
              run_emulated(p, alpha, beta, c0, Nest::split_n, panel_major, true),
              run_emulated(p, alpha, beta, c0, Nest::split_n, strip_major, true),
              run_emulated(p, alpha, beta, c0, Nest::split_m, panel_major, true),
              run_emulated(p, alpha, beta, c0, Nest::split_n_prepacked, panel_major, false),
              run_emulated(p, alpha, beta, c0, Nest::split_n_prepacked, strip_major, true)};
          for (const auto& c : others) CHECK(std::memcmp(c.data(), ref.data(), c.size() * sizeof(float)) == 0);
          ++cases;
        }
  omp_set_num_threads(saved);
  CHECK(cases == 3 * 3 * 2 * 4);
}

namespace {
// The emulated kernel, counting the tiles each OpenMP thread runs.
std::atomic<int> g_tiles_by_thread[2];
struct TileCountingKernel : EmuKernel12x32 {
  template <class... Args>
  static void run(Args... args) {
    const int tid = omp_get_thread_num();
    if (tid < 2) g_tiles_by_thread[tid].fetch_add(1, std::memory_order_relaxed);
    EmuKernel12x32::run(args...);
  }
};

// C = A·B through split_n on `threads` threads with the tile-counting kernel (counts reset first); kc 16, Â blocks
// of 4 panels, panel-major, groups of 2 strips.
std::vector<float> run_counting_tiles(const Problem<float>& p, int threads) {
  const lava::gemm_detail::PackedBlocking bl{16, 48, 64, 0, 2};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  for (auto& n : g_tiles_by_thread) n = 0;
  std::vector<float> c = p.C;
  const auto v = lava::gemm_detail::make_view(false, false, p.M, p.N, p.K, 1.0f, p.A.data(), p.lda, p.B.data(),
                                              p.ldb, 0.0f, c.data(), p.ldc);
  lava::gemm_detail::gemm_split_n<TileCountingKernel>(v, bl, true);
  omp_set_num_threads(saved);
  return c;
}
}  // namespace

TEST_CASE("gemm packed driver: a C narrower than its thread count's share of groups is still split over both threads") {
  // One Â block and one k block in panel-major order, the case where the threads may take strip groups from a
  // shared counter: with C only one group wide (2 strips, groups of 2), that counter would give the whole product
  // to one thread. The fixed halves give each thread one strip.
  TestRng rng{7};
  const Problem<float> p(false, false, 28, 64, 5, 0, rng);
  const std::vector<float> c = run_counting_tiles(p, 2);
  CHECK(g_tiles_by_thread[0].load() == 3);  // 3 panels × its 1 strip
  CHECK(g_tiles_by_thread[1].load() == 3);
  CHECK(count_mismatches(p, 1.0f, 0.0f, p.C, c) == 0);
}

TEST_CASE("gemm packed driver: with 4 groups a thread, the shared counter runs every tile once, the same bits") {
  // 18 strips, nc 2 strips wide: 9 nc groups, enough (4 a thread) for the threads to take groups from the shared
  // counter, which hands them out a third of nc wide (here 1 strip, 18 groups). Every tile must run exactly once
  // (3 panels × 18 strips) and give the bits of the one-thread run.
  TestRng rng{8};
  const Problem<float> p(false, false, 28, 18 * 32, 5, 0, rng);
  std::vector<float> c[2];
  for (int threads : {1, 2}) {
    c[threads - 1] = run_counting_tiles(p, threads);
    CHECK(g_tiles_by_thread[0].load() + g_tiles_by_thread[1].load() == 3 * 18);
  }
  CHECK(count_mismatches(p, 1.0f, 0.0f, p.C, c[0]) == 0);
  CHECK(std::memcmp(c[0].data(), c[1].data(), c[0].size() * sizeof(float)) == 0);
}

TEST_CASE("gemm packed driver: a pair in one region gives each product its own bits, in either order") {
  // One product with fixed shares (K = 40 > kc = 16) and one with shared groups (one k block, 18 strips, groups of
  // 1), as the output layer's dx and [dW; db]: on two threads each thread runs its share of the first, then takes
  // groups of the second. Every tile of both must run once, with the bits of each product run alone on one thread.
  using lava::gemm_detail::make_view;
  const lava::gemm_detail::PackedBlocking bl{16, 48, 64, 0, 2};
  TestRng rng{9};
  const Problem<float> fixed(false, false, 28, 64, 40, 0, rng), shared(true, false, 28, 18 * 32, 5, 0, rng);
  const auto view = [](const Problem<float>& p, std::vector<float>& c, float beta) {
    return make_view(p.ta, p.tb, p.M, p.N, p.K, 1.0f, p.A.data(), p.lda, p.B.data(), p.ldb, beta, c.data(), p.ldc);
  };
  std::vector<float> fixed_alone = fixed.C, shared_alone = shared.C;
  lava::gemm_detail::gemm_split_n<EmuKernel12x32>(view(fixed, fixed_alone, 0.0f), bl, false);
  lava::gemm_detail::gemm_split_n<EmuKernel12x32>(view(shared, shared_alone, 1.0f), bl, false);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  CHECK_FALSE(lava::gemm_detail::plan_split_n<EmuKernel12x32>(view(fixed, fixed_alone, 0.0f), bl, true).dynamic);
  CHECK(lava::gemm_detail::plan_split_n<EmuKernel12x32>(view(shared, shared_alone, 1.0f), bl, true).dynamic);
  for (int order = 0; order < 2; ++order) {
    INFO("order " << order);
    std::vector<float> c_fixed = fixed.C, c_shared = shared.C;
    const auto v_fixed = view(fixed, c_fixed, 0.0f), v_shared = view(shared, c_shared, 1.0f);
    for (auto& n : g_tiles_by_thread) n = 0;
    lava::gemm_detail::gemm_packed_pair<TileCountingKernel>(order ? v_shared : v_fixed, order ? v_fixed : v_shared,
                                                            bl, true);
    CHECK(g_tiles_by_thread[0].load() + g_tiles_by_thread[1].load() == 3 * 2 * 3 + 3 * 18);  // 3 k blocks × 3 × 2
    CHECK(std::memcmp(c_fixed.data(), fixed_alone.data(), c_fixed.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(c_shared.data(), shared_alone.data(), c_shared.size() * sizeof(float)) == 0);
  }
  omp_set_num_threads(saved);
}
