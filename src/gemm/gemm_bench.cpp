// GEMM benchmark (see gemm_bench.hpp): GFLOP/s = 2·M·N·K / median seconds, for lava::gemm<float> (plain, and with
// op(B) packed once) and, if it can be loaded at run time, OpenBLAS's cblas_sgemm on the same buffers.
#include "gemm/gemm_bench.hpp"

#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "gemm/gemm.hpp"

namespace lava {

namespace {

// The two OpenBLAS entry points we use, resolved with dlsym (CBLAS enums: RowMajor 101, NoTrans 111, Trans 112).
struct OpenBlas {
  using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                           int);
  using SetThreadsFn = void (*)(int);
  using NameFn = char* (*)();
  SgemmFn sgemm = nullptr;
  SetThreadsFn set_threads = nullptr;
  std::string core;  // openblas_get_corename(): the kernel family it chose, e.g. "Haswell", "Zen", "Cooperlake"
};

// Loads libopenblas.so.0 once per process; nullptr when it is not installed. OPENBLAS_CORETYPE and
// OPENBLAS_L2_SIZE are cleared while it loads (OpenBLAS reads its environment once, in its constructor) so that it
// picks its kernels for this CPU itself instead of a forced, narrower core type, and OPENBLAS_THREAD_TIMEOUT is set
// unless the caller set it; all three are put back as they were right after, so the process's environment (and
// that of any child it starts, such as the test runner's `lava` processes) never changes.
class EnvOverride {
 public:
  // value == nullptr unsets; keep_set leaves a variable that is already set alone.
  EnvOverride(const char* name, const char* value, bool keep_set = false) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (had_ && keep_set) return;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvOverride() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }
  EnvOverride(const EnvOverride&) = delete;
  EnvOverride& operator=(const EnvOverride&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

const OpenBlas* open_blas() {
  static const std::unique_ptr<OpenBlas> lib = []() -> std::unique_ptr<OpenBlas> {
    const EnvOverride coretype("OPENBLAS_CORETYPE", nullptr), l2("OPENBLAS_L2_SIZE", nullptr);
    // Its worker threads sleep at once after a call (2^4 cycles of spinning, not 2^28), as LAVA's do under
    // OMP_WAIT_POLICY=passive: the rounds alternate the two, and a spinning team would hold the other's core.
    const EnvOverride timeout("OPENBLAS_THREAD_TIMEOUT", "4", /*keep_set=*/true);
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    auto ob = std::make_unique<OpenBlas>();
    ob->sgemm = reinterpret_cast<OpenBlas::SgemmFn>(dlsym(h, "cblas_sgemm"));
    ob->set_threads = reinterpret_cast<OpenBlas::SetThreadsFn>(dlsym(h, "openblas_set_num_threads"));
    if (ob->sgemm == nullptr || ob->set_threads == nullptr) return nullptr;  // (handle stays open; harmless)
    const auto corename = reinterpret_cast<OpenBlas::NameFn>(dlsym(h, "openblas_get_corename"));
    const char* core = corename ? corename() : nullptr;
    ob->core = core ? core : "unknown";
    return ob;
  }();
  return lib.get();
}

// A 64-byte aligned float buffer filled with values in [-1, 1) from a fixed linear congruential sequence.
struct AlignedFloats {
  float* data = nullptr;
  explicit AlignedFloats(std::size_t n) {
    const std::size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    data = static_cast<float*>(std::aligned_alloc(64, std::max<std::size_t>(bytes, 64)));
    if (data == nullptr) throw std::bad_alloc();
    std::uint32_t s = 12345u;
    for (std::size_t i = 0; i < n; ++i) {
      s = s * 1664525u + 1013904223u;
      data[i] = float(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
  }
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;
  ~AlignedFloats() { std::free(data); }
};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A timed GEMM: enough back-to-back calls (after a warm-up: page faults, packing buffers, thread pool) that one
// sample lasts ≥ 20 ms.
class TimedCall {
 public:
  TimedCall(double flops, std::function<void()> call) : flops_(flops), call_(std::move(call)) {
    call_();
    const double t0 = now_seconds();
    call_();
    calls_ = std::max(1, int(0.02 / std::max(1e-7, now_seconds() - t0)));
  }
  double sample_gflops() const {
    const double s0 = now_seconds();
    for (int c = 0; c < calls_; ++c) call_();
    return flops_ * calls_ / (now_seconds() - s0) * 1e-9;
  }

 private:
  double flops_;
  std::function<void()> call_;
  int calls_ = 1;
};

// op(X)(r, c) of a row-major X with leading dimension ld: X(r, c), or X(c, r) when transposed.
float op_at(const float* X, int ld, bool trans, int r, int c) {
  return trans ? X[std::size_t(c) * ld + r] : X[std::size_t(r) * ld + c];
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

double gemm_error_ratio(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                        const float* C, int ldc) {
  const double u = 0x1p-24, gamma = K * u < 1 ? K * u / (1 - K * u) : 1.0;
  std::vector<std::pair<int, int>> entries{{0, 0}, {0, N - 1}, {M - 1, 0}, {M - 1, N - 1}};
  std::uint32_t s = 2463534242u;  // xorshift32: a fixed spread of entries over C
  for (int e = 0; e < 60; ++e) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    const int i = int(s % std::uint32_t(M));
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    entries.push_back({i, int(s % std::uint32_t(N))});
  }
  double worst = 0;
  for (const auto& [i, j] : entries) {
    double exact = 0, magnitude = 0;
    for (int k = 0; k < K; ++k) {
      const double p = double(op_at(A, lda, ta, i, k)) * double(op_at(B, ldb, tb, k, j));
      exact += p;
      magnitude += std::abs(p);
    }
    const double error = std::abs(double(C[std::size_t(i) * ldc + j]) - exact);
    if (std::isnan(error)) return HUGE_VAL;  // a NaN in C is off by more than any bound
    worst = std::max(worst, error == 0 ? 0 : magnitude == 0 ? HUGE_VAL : error / (gamma * magnitude));
  }
  return worst;
}

std::vector<GemmBenchRow> run_gemm_bench(const std::vector<std::array<int, 3>>& shapes,
                                         const std::vector<int>& threads, const std::vector<std::string>& trans,
                                         int repeats) {
  if (shapes.empty() || threads.empty() || trans.empty())
    throw UsageError("gemm bench: empty shape/threads/trans list");
  if (repeats < 1) throw UsageError("gemm bench: repeats must be ≥ 1");
  for (const auto& s : shapes)
    if (s[0] < 1 || s[1] < 1 || s[2] < 1)
      throw UsageError(fmt::format("gemm bench: shape {}x{}x{} has a dimension < 1", s[0], s[1], s[2]));
  for (int t : threads)
    if (t < 1) throw UsageError(fmt::format("gemm bench: thread count {} < 1", t));
  for (const auto& t : trans)
    if (t != "NN" && t != "NT" && t != "TN" && t != "TT")
      throw UsageError(fmt::format("gemm bench: trans {} is not one of NN, NT, TN, TT", quote_input(t)));

  const OpenBlas* ob = open_blas();
  const int saved_threads = omp_get_max_threads();
  std::vector<GemmBenchRow> rows;
  for (const auto& s : shapes) {
    const int M = s[0], N = s[1], K = s[2];
    AlignedFloats A(std::size_t(M) * K), B(std::size_t(K) * N), C(std::size_t(M) * N);
    AlignedFloats B_packed(std::size_t(gemm_packed_b_size<float>(K, N)));
    const double flops = 2.0 * M * N * K;
    for (int t : threads) {
      for (const auto& tr : trans) {
        const bool ta = tr[0] == 'T', tb = tr[1] == 'T';
        const int lda = ta ? M : K, ldb = tb ? K : N;
        omp_set_num_threads(t);
        const PackedB<float> packed{tb, K, N, B.data, ldb, B_packed.data};
        gemm_pack_b(packed);
        const TimedCall plain(flops,
                              [&] { gemm<float>(ta, tb, M, N, K, 1.0f, A.data, lda, B.data, ldb, 0.0f, C.data, N); });
        const TimedCall packed_b(flops, [&] { gemm<float>(ta, M, 1.0f, A.data, lda, packed, 0.0f, C.data, N); });
        std::optional<TimedCall> open_blas_call;
        if (ob != nullptr) {
          ob->set_threads(t);
          open_blas_call.emplace(flops, [&] {
            ob->sgemm(101, ta ? 112 : 111, tb ? 112 : 111, M, N, K, 1.0f, A.data, lda, B.data, ldb, 0.0f, C.data, N);
          });
        }
        // Rounds of one sample each, so that the machine's drift (a VM's speed can change severalfold within
        // minutes) reaches LAVA, the FMA peak and OpenBLAS alike.
        std::vector<double> peak, lava, lava_packed, open_blas;
        for (int r = 0; r < repeats; ++r) {
          peak.push_back(measure_fma_peak_gflops(t, 1, 0.02));
          lava.push_back(plain.sample_gflops());
          lava_packed.push_back(packed_b.sample_gflops());
          if (open_blas_call) {
            // Let the OpenMP workers stop spinning before OpenBLAS's own threads start (2 cores are easily shared).
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            open_blas.push_back(open_blas_call->sample_gflops());
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }
        // Each timed product once more, each result checked against the double-precision reference.
        const auto error_of = [&](const std::function<void()>& call) {
          std::fill(C.data, C.data + std::size_t(M) * N, std::nanf(""));  // no result of an earlier call counts
          call();
          return gemm_error_ratio(ta, tb, M, N, K, A.data, lda, B.data, ldb, C.data, N);
        };
        double error = std::max(
            error_of([&] { gemm<float>(ta, tb, M, N, K, 1.0f, A.data, lda, B.data, ldb, 0.0f, C.data, N); }),
            error_of([&] { gemm<float>(ta, M, 1.0f, A.data, lda, packed, 0.0f, C.data, N); }));
        if (ob != nullptr)
          error = std::max(error, error_of([&] {
                             ob->sgemm(101, ta ? 112 : 111, tb ? 112 : 111, M, N, K, 1.0f, A.data, lda, B.data, ldb,
                                       0.0f, C.data, N);
                           }));
        const double lava_gflops = median(lava);
        rows.push_back(GemmBenchRow{M, N, K, tr, t, lava_gflops, lava_gflops / median(peak),
                                    open_blas.empty() ? -1.0 : median(open_blas), median(lava_packed), error});
      }
    }
  }
  omp_set_num_threads(saved_threads);
  return rows;
}

double measure_kernel_loop_ratio(int threads, int repeats) {
  std::vector<double> peak, kernel_loop;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    peak.push_back(measure_fma_peak_gflops(threads, 1, 0.02));
    kernel_loop.push_back(measure_kernel_loop_gflops(threads, 1, 0.02));
  }
  return median(kernel_loop) / median(peak);
}

std::string openblas_core_name() {
  const OpenBlas* ob = open_blas();
  return ob ? ob->core : std::string();
}

}  // namespace lava
