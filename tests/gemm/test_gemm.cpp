// GEMM tests: every path of lava::gemm against the double-accumulated gemm_naive, plus determinism across threads.
// The packed driver's loop nests with an emulated AVX-512 tile are in test_gemm_packed_driver.cpp.
#include <doctest/doctest.h>
#include <omp.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "gemm/gemm.hpp"
#include "gemm/gemm_kernels.hpp"
#include "gemm/gemm_view.hpp"
#include "gemm_problem.hpp"

TEST_CASE("gemm_naive: 2x2 example by hand, all transposes") {
  // op(A) = [[1,2],[3,4]], op(B) = [[5,6],[7,8]]  ->  op(A)op(B) = [[19,22],[43,50]]
  const double a[] = {1, 2, 3, 4}, at[] = {1, 3, 2, 4}, b[] = {5, 6, 7, 8}, bt[] = {5, 7, 6, 8};
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    double c[] = {1, 1, 1, 1};
    lava::gemm_naive<double>(ta, tb, 2, 2, 2, 2.0, ta ? at : a, 2, tb ? bt : b, 2, -1.0, c, 2);
    CHECK(c[0] == 37);
    CHECK(c[1] == 43);
    CHECK(c[2] == 85);
    CHECK(c[3] == 99);
  }
}

TEST_CASE_TEMPLATE("gemm: matches naive on awkward shapes, transposes, strides, alpha/beta", T, float, double) {
  const int sizes[] = {1, 7, 13, 31, 33, 65};
  TestRng rng{12345};
  int cases = 0, failed_cases = 0;
  for (int M : sizes)
    for (int N : sizes)
      for (int K : sizes)
        for (int t = 0; t < 4; ++t) {
          const bool ta = t & 1, tb = t & 2;
          const int pad = (M + N + K + t) % 3 == 0 ? 0 : 5;  // mostly padded leading dimensions, some minimal
          Problem<T> p(ta, tb, M, N, K, pad, rng);
          // alternate general alpha/beta with beta = 0 over a NaN-filled C
          const bool beta_zero = (M + N + K + t) % 2 == 0;
          const T alpha = T(0.75), beta = beta_zero ? T(0) : T(-1.25);
          const std::vector<T> c0 = beta_zero ? nan_filled<T>(p.C.size()) : p.C;
          const int bad = count_mismatches(p, alpha, beta, c0, p.run(alpha, beta, c0));
          ++cases;
          if (bad != 0) {
            ++failed_cases;
            INFO("M=" << M << " N=" << N << " K=" << K << " ta=" << ta << " tb=" << tb << " beta=" << beta);
            CHECK(bad == 0);
          }
        }
  CHECK(cases == 6 * 6 * 6 * 4);
  CHECK(failed_cases == 0);
}

TEST_CASE_TEMPLATE("gemm: large and skinny shapes match naive", T, float, double) {
  // Shapes that cross the blocking boundaries (several k blocks, several C tiles) and the skinny LSTM-like cases.
  // 160 rows: panel-major split_n; 64×300: strip-major with several groups; 5 rows: B read in place; N = 3: split_m
  // with 2 threads; K = 390 and 520: two k blocks.
  // M, N or K = 1 (the direct path of gemm_direct.hpp): the attention shapes of a training step, where each of
  // its three loop forms (row axpy, dot product, column axpy) runs for some transpose.
  const int shapes[][3] = {{160, 40, 390}, {64, 300, 200}, {5, 1100, 70},  {257, 3, 800}, {40, 129, 520},
                           {256, 1, 640}, {640, 1, 256},  {1, 20, 256}, {20, 256, 1},  {1, 600, 300}};
  TestRng rng{777};
  for (const auto& s : shapes)
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      Problem<T> p(ta, tb, s[0], s[1], s[2], 3, rng);
      INFO("M=" << s[0] << " N=" << s[1] << " K=" << s[2] << " ta=" << ta << " tb=" << tb);
      if (t % 2 == 0) {
        CHECK(count_mismatches(p, T(-0.5), T(0.25), p.C, p.run(T(-0.5), T(0.25), p.C)) == 0);
      } else {
        const auto c_nan = nan_filled<T>(p.C.size());
        CHECK(count_mismatches(p, T(1), T(0), c_nan, p.run(T(1), T(0), c_nan)) == 0);
      }
    }
}

TEST_CASE_TEMPLATE("gemm: K = 0 or alpha = 0 only scales C by beta", T, float, double) {
  TestRng rng{5};
  Problem<T> p(false, false, 9, 11, 0, 2, rng);
  auto c = p.run(T(1), T(2), p.C);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 11; ++j) CHECK(c[std::size_t(i) * p.ldc + j] == T(2) * p.C[std::size_t(i) * p.ldc + j]);
  Problem<T> q(true, true, 9, 11, 4, 0, rng);
  const auto c_nan = nan_filled<T>(q.C.size());
  for (T x : q.run(T(0), T(0), c_nan)) CHECK(x == T(0));
}

TEST_CASE_TEMPLATE("gemm: bit-identical with 1 and 2 threads, and inside a parallel region", T, float, double) {
  // float: 300×200×500 takes the panel-major split_n nest, 64×1024×256 the strip-major one, 240×8000×256 and
  // 257×7800×240 (one Â block, one k block: the output layer's products, wide enough for 4 groups a thread with
  // the AVX2 and AVX-512 blockings) hand out column groups from a shared counter, 240×2000×256 (too few groups for
  // that) the fixed halves; double (portable kernel) uses smaller shapes that still span several C tiles.
  const std::vector<std::array<int, 3>> shapes =
      std::is_same_v<T, float>
          ? std::vector<std::array<int, 3>>{{300, 200, 500}, {64, 1024, 256}, {240, 8000, 256}, {257, 7800, 240},
                                            {240, 2000, 256},
                                            {97, 61, 45}, {257, 3, 100}, {700, 1, 300}, {300, 700, 1}}
          : std::vector<std::array<int, 3>>{{200, 120, 300}, {97, 61, 45}, {257, 3, 100}, {700, 1, 300}};
  TestRng rng{99};
  const int saved = omp_get_max_threads();
  for (const auto& s : shapes)
    for (int t = 0; t < 4; ++t) {
      Problem<T> p(t & 1, t & 2, s[0], s[1], s[2], 1, rng);
      INFO("M=" << s[0] << " N=" << s[1] << " K=" << s[2] << " trans=" << t);
      omp_set_num_threads(1);
      const auto c1 = p.run(T(1.5), T(0.5), p.C);
      omp_set_num_threads(2);
      const auto c2 = p.run(T(1.5), T(0.5), p.C);
      std::vector<T> c_nested;
#pragma omp parallel num_threads(2)
      {
#pragma omp single
        c_nested = p.run(T(1.5), T(0.5), p.C);
      }
      CHECK(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(T)) == 0);
      CHECK(std::memcmp(c1.data(), c_nested.data(), c1.size() * sizeof(T)) == 0);
    }
  omp_set_num_threads(saved);
}

TEST_CASE("gemm: row-major A with rows 1 KiB apart (packed, not read in place) matches naive, 1 and 2 threads") {
  // lda = 256 and 512 floats: split_n packs such an A in the threads that own ≥ 16 strips of 16 columns. N = 496
  // has 31 strips: one thread packs; of two threads one packs (16 strips) and the other reads A in place (15).
  const int shapes[][3] = {{100, 496, 256}, {40, 1024, 512}, {7, 600, 256}};
  TestRng rng{4242};
  const int saved = omp_get_max_threads();
  for (const auto& s : shapes)
    for (bool tb : {false, true}) {
      Problem<float> p(false, tb, s[0], s[1], s[2], 0, rng);
      REQUIRE(p.lda % 256 == 0);
      INFO("M=" << s[0] << " N=" << s[1] << " K=" << s[2] << " tb=" << tb);
      omp_set_num_threads(1);
      const auto c1 = p.run(0.5f, -1.0f, p.C);
      omp_set_num_threads(2);
      const auto c2 = p.run(0.5f, -1.0f, p.C);
      CHECK(count_mismatches(p, 0.5f, -1.0f, p.C, c1) == 0);
      CHECK(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)) == 0);
    }
  omp_set_num_threads(saved);
}


TEST_CASE("gemm: every float path this CPU can run matches naive, 1 and 2 threads the same bits") {
  // lava::gemm<float> takes only the widest path the CPU supports (on an AVX-512 machine neither the AVX2 kernel
  // nor the generic one), so call each path directly: the narrower ones are what other machines run.
  using PathFn = void (*)(const lava::gemm_detail::GemmView<float>&, bool);
  std::vector<std::pair<const char*, PathFn>> paths{{"generic", lava::gemm_detail::sgemm_generic}};
#if LAVA_GEMM_HAVE_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    paths.emplace_back("avx2", lava::gemm_detail::sgemm_avx2);
  if (__builtin_cpu_supports("avx512f")) paths.emplace_back("avx512", lava::gemm_detail::sgemm_avx512);
#endif
  const int shapes[][3] = {{13, 33, 7}, {65, 31, 400}, {160, 40, 60}, {2, 100, 9}, {64, 300, 256}, {200, 100, 500}};
  TestRng rng{31};
  const int saved = omp_get_max_threads();
  for (const auto& [name, path] : paths)
    for (const auto& s : shapes)
      for (int t = 0; t < 4; ++t) {
        Problem<float> p(t & 1, t & 2, s[0], s[1], s[2], 2, rng);
        INFO(name << " M=" << s[0] << " N=" << s[1] << " K=" << s[2] << " trans=" << t);
        std::vector<float> c[2] = {p.C, p.C};
        for (int threads = 1; threads <= 2; ++threads) {
          const auto v = lava::gemm_detail::make_view(p.ta, p.tb, p.M, p.N, p.K, 0.5f, p.A.data(), p.lda,
                                                      p.B.data(), p.ldb, 2.0f, c[threads - 1].data(), p.ldc);
          omp_set_num_threads(threads);
          path(v, threads > 1);
        }
        CHECK(count_mismatches(p, 0.5f, 2.0f, p.C, c[0]) == 0);
        CHECK(std::memcmp(c[0].data(), c[1].data(), c[0].size() * sizeof(float)) == 0);
      }
  omp_set_num_threads(saved);
}

TEST_CASE_TEMPLATE("gemm with a PackedB: the same bits as the plain call, 1 and 2 threads", T, float, double) {
  // Shapes with several k blocks (K > 384), ragged strips, the strip-major nest (M = 32), the direct path (M = 1),
  // and the output layer's logits product (240 rows, K = 256: column groups from a shared counter on two threads
  // when N allows 4 groups a thread).
  const std::vector<std::array<int, 3>> shapes = {{32, 1024, 256}, {97, 61, 800}, {300, 37, 45}, {1, 50, 70},
                                                  {240, 8000, 256}};
  TestRng rng{7};
  const int saved = omp_get_max_threads();
  for (const auto& s : shapes)
    for (int t = 0; t < 4; ++t) {
      Problem<T> p(t & 1, t & 2, s[0], s[1], s[2], 2, rng);
      INFO("M=" << s[0] << " N=" << s[1] << " K=" << s[2] << " trans=" << t);
      std::vector<T> storage(std::size_t(lava::gemm_packed_b_size<T>(p.K, p.N)));
      const lava::PackedB<T> b{p.tb, p.K, p.N, p.B.data(), p.ldb, storage.data()};
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        lava::gemm_pack_b(b);
        std::vector<T> got = p.C;
        lava::gemm<T>(p.ta, p.M, T(0.5), p.A.data(), p.lda, b, T(-2), got.data(), p.ldc);
        const auto want = p.run(T(0.5), T(-2), p.C);
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0);
      }
    }
  omp_set_num_threads(saved);
}

TEST_CASE_TEMPLATE("gemm_pair: the bits of the two calls one after the other, 1 and 2 threads", T, float, double) {
  // The output layer's backward pair in miniature: dx = dlogits · Wᵀ (Wᵀ packed, K = V > kc: fixed halves of its
  // strips) and [dW; db] += [x 1]ᵀ · dlogits (one k block, ≥ 4 groups a thread: shared groups), in both orders;
  // and pairs that do not share a region: a product too small to split, and one on the direct path (M = 1).
  const int rows = 48, H = 64, V = 4000;
  TestRng rng{11};
  const auto dlogits = random_buffer<T>(std::size_t(rows) * V, rng);
  const auto x1 = random_buffer<T>(std::size_t(rows) * (H + 1), rng);
  const auto W = random_buffer<T>(std::size_t(H) * V, rng), small = random_buffer<T>(64, rng);
  std::vector<T> storage(std::size_t(lava::gemm_packed_b_size<T>(V, H)));
  const lava::PackedB<T> W_t{true, V, H, W.data(), V, storage.data()};
  const auto dx0 = random_buffer<T>(std::size_t(rows) * H, rng), dW0 = random_buffer<T>(std::size_t(H + 1) * V, rng);
  const auto small0 = random_buffer<T>(20, rng);  // a 4×4 C, then a 1×4 one
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    INFO("threads " << threads);
    lava::gemm_pack_b(W_t);
    std::vector<T> dx = dx0, dW = dW0, c_small = small0;
    const lava::GemmArgs<T> dx_args{.M = rows, .A = dlogits.data(), .lda = V, .beta = T(0.5), .C = dx.data(),
                                    .ldc = H, .packed = &W_t};
    const lava::GemmArgs<T> dw_args{.trans_a = true, .M = H + 1, .N = V, .K = rows, .A = x1.data(), .lda = H + 1,
                                    .B = dlogits.data(), .ldb = V, .beta = T(1), .C = dW.data(), .ldc = V};
    const lava::GemmArgs<T> small_args{.M = 4, .N = 4, .K = 4, .A = small.data(), .lda = 4, .B = small.data() + 16,
                                       .ldb = 4, .C = c_small.data(), .ldc = 4};
    const lava::GemmArgs<T> direct_args{.M = 1, .N = 4, .K = 8, .A = small.data(), .lda = 8, .B = small.data() + 8,
                                        .ldb = 4, .beta = T(1), .C = c_small.data() + 16, .ldc = 4};
    lava::gemm(dx_args);
    lava::gemm(dw_args);
    lava::gemm(small_args);
    lava::gemm(direct_args);
    const std::vector<T> want_dx = dx, want_dW = dW, want_small = c_small;
    const auto same = [](const std::vector<T>& a, const std::vector<T>& b) {
      return std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
    };
    for (int order = 0; order < 2; ++order) {
      dx = dx0, dW = dW0;
#if LAVA_PROFILE  // the profiling build also counts the pair's work once, as two products
      const unsigned long long flops0 = lava::gemm_flop_count();
#endif
      lava::gemm_pair(order ? dw_args : dx_args, order ? dx_args : dw_args);
#if LAVA_PROFILE
      CHECK(lava::gemm_flop_count() - flops0 == 2ull * rows * H * V + 2ull * (H + 1) * V * rows);
#endif
      CHECK(same(dx, want_dx));
      CHECK(same(dW, want_dW));
    }
    dx = dx0, c_small = small0;
    lava::gemm_pair(dx_args, small_args);
    lava::gemm_pair(direct_args, small_args);  // small_args again: C = A·B whatever C held
    CHECK(same(dx, want_dx));
    CHECK(same(c_small, want_small));
  }
  omp_set_num_threads(saved);
}

TEST_CASE("gemm: leading dimensions smaller than the matrix are rejected") {
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 0.0f);
  CHECK_THROWS_AS(lava::gemm<float>(false, false, 4, 4, 4, 1.0f, a.data(), 3, b.data(), 4, 0.0f, c.data(), 4),
                  std::logic_error);
  CHECK_THROWS_AS(lava::gemm<float>(false, true, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 3, 0.0f, c.data(), 4),
                  std::logic_error);
  CHECK_THROWS_AS(lava::gemm<float>(false, false, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 4, 0.0f, c.data(), 3),
                  std::logic_error);
  CHECK_NOTHROW(lava::gemm<float>(true, true, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 4, 0.0f, c.data(), 4));
}
