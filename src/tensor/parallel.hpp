#pragma once
// OpenMP conventions for kernels. A loop is split over threads only when it has enough work to pay for the
// fork/join (a few µs): write `#pragma omp parallel for schedule(static) if (work >= kParallelMin)`.
// Every split is over independent outputs, and no reduction crosses threads, so no result depends on the
// thread count.
#include <cstdint>

namespace lava {
constexpr int64_t kParallelMin = 1 << 15;
}  // namespace lava
