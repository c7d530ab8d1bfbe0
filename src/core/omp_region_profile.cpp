// The OpenMP-region column of the op profile (core/op_profile.hpp): what the runtime adds to every parallel region.
//
// GCC compiles every `#pragma omp parallel` (with or without `for`, and with an `if` that is false) into one call,
// GOMP_parallel(fn, data, num_threads, flags), which runs fn(data) on each thread of the team and returns after
// the join. This file defines that symbol, so every region of the program calls it first (a definition in the
// executable takes precedence over libgomp's), and forwards to libgomp's own (dlvsym RTLD_NEXT). When the op
// profile is off, or the caller is not the profiled thread, or the caller is already inside a profiled region, it
// forwards at once: one call more per region and no clock read. Profiling, it runs fn through a trampoline that
// times each thread's body, and files the region's overhead (wall time − the longest body) and imbalance (the
// longest body − the mean body) under the op that opened it. GCC passes an `if` clause as num_threads: 1 when it is
// false (`num_threads = !cond`), else 0 (the default team); a region opened with num_threads ≠ 1 was meant to split,
// and its wall time is filed as such (op_profile::add_omp_region). clang's OpenMP (the fuzz build) uses
// __kmpc_fork_call instead and never comes here.
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/op_profile.hpp"

#if LAVA_PROFILE  // the product build calls libgomp directly

namespace {
using GompParallelFn = void (*)(void (*)(void*), void*, unsigned, unsigned);

GompParallelFn libgomp_parallel() {
  static const GompParallelFn real = [] {
    void* f = dlvsym(RTLD_NEXT, "GOMP_parallel", "GOMP_4.0");
    if (!f) f = dlsym(RTLD_NEXT, "GOMP_parallel");
    if (!f) {
      std::fprintf(stderr, "lava: libgomp's GOMP_parallel not found (%s)\n", dlerror());
      std::abort();
    }
    return reinterpret_cast<GompParallelFn>(f);
  }();
  return real;
}

constexpr int kMaxTimedThreads = 256;
thread_local bool t_in_region = false;

// One region's trampoline data: the real body and each thread's time in it.
struct TimedRegion {
  void (*fn)(void*);
  void* data;
  double body_seconds[kMaxTimedThreads];
  std::atomic<int> team{0};
};

void timed_body(void* p) {
  auto* r = static_cast<TimedRegion*>(p);
  const auto t0 = std::chrono::steady_clock::now();
  r->fn(r->data);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int id = omp_get_thread_num();
  if (id < kMaxTimedThreads) r->body_seconds[id] = s;
  r->team.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  if (!lava::op_profile::active() || t_in_region) {
    libgomp_parallel()(fn, data, num_threads, flags);
    return;
  }
  TimedRegion r{fn, data, {}, {}};
  t_in_region = true;
  const auto t0 = std::chrono::steady_clock::now();
  libgomp_parallel()(timed_body, &r, num_threads, flags);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t_in_region = false;
  const int team = std::min(r.team.load(std::memory_order_relaxed), kMaxTimedThreads);
  double longest = 0, sum = 0;
  for (int i = 0; i < team; ++i) longest = std::max(longest, r.body_seconds[i]), sum += r.body_seconds[i];
  lava::op_profile::add_omp_region(wall - longest, team > 0 ? longest - sum / team : 0, num_threads != 1, wall);
}

#endif  // LAVA_PROFILE
