#pragma once
// The CPU time this process has used, user plus system, over all its threads (getrusage): what a cluster bills and
// what `lava sweep plan --estimate` predicts, unlike wall time, which grows with whatever shares the cores.
#include <sys/resource.h>

namespace lava {

inline double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

}  // namespace lava
