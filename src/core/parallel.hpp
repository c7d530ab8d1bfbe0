#pragma once
// OpenMP conventions for kernels. A loop is split over threads only when it has enough work to pay for the
// fork/join (a few µs): write `#pragma omp parallel for schedule(static) if (work >= kParallelMin)`.
// Every split is over independent outputs, and no reduction crosses threads, so no result depends on the
// thread count.
#include <cstdint>

namespace lava {
// 2^15 = 32,768 elements. Splitting a loop of n elements over 2 threads saves at most half its time, t(n)/2, and
// costs one fork/join: a few µs while the other thread still spins, 10–20 µs once it sleeps. An elementwise pass
// streams several elements a nanosecond, so only from about 2^15 elements is t(n)/2 larger than the fork/join. A
// lower threshold (2^13) would also split a soft-attention decoder's 32×256 elementwise ops, each then one more
// region that must wake a sleeping thread under a passive wait policy (OMP_WAIT_POLICY=passive).
constexpr int64_t kParallelMin = 1 << 15;

// f(i) for every i < n: split over the threads when `split`, else in turn on this thread. Not a parallel `for`
// with an `if`: a region whose `if` is false still counts as a nesting level (omp_get_level() = 1), so every gemm
// called inside one runs on the calling thread alone (gemm.cpp), and before that started a nested team per call.
template <class F>
void for_each_split_if(int64_t n, bool split, const F& f) {
  if (split) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
  } else {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}
}  // namespace lava
