#pragma once
// OpenMP conventions for kernels. A loop is split over threads only when it has enough work to pay for the
// fork/join (a few µs): write `#pragma omp parallel for schedule(static) if (work >= kParallelMin)`.
// Every split is over independent outputs, and no reduction crosses threads, so no result depends on the
// thread count.
#include <cstdint>

namespace lava {
// 32,768 elements. 2^13 (a soft-attention decoder's 32×256 elementwise ops split too) measured both ways on a
// two-thread soft step (`lava bench train --attn soft --threads 2`, builds alternated): 0.94–1.01 of the step time
// (median 0.975) with the brief spin the scripts set (GOMP_SPINCOUNT=20000), but 1.06–1.14 under plain
// OMP_WAIT_POLICY=passive, where each extra region wakes a sleeping thread; not kept.
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
