#pragma once
// CPU time, user plus system, over all threads (getrusage): what a cluster bills and what `lava sweep plan
// --estimate` predicts, unlike wall time, which grows with whatever shares the cores.
#include <sys/resource.h>

namespace lava {

// The user plus system seconds of a resource usage record (this process's, or a waited-for child's).
inline double cpu_seconds(const rusage& u) {
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

// The CPU time this process has used so far.
inline double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return cpu_seconds(u);
}

}  // namespace lava
