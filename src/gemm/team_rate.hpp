#pragma once
// The rate of a team of OpenMP threads that each repeat a piece of work until a common deadline:
//   rate = Σ_thread flops_t / wall seconds   (GFLOP/s)
// Why a deadline and not the same work per thread: a VM's vCPUs may run the same L1-bound kernel at different
// speeds, each changing within seconds as the hypervisor schedules the host's cores. With equal shares
// a team's rate is threads · (the slowest thread's rate); the training step's large GEMMs hand out work from a shared
// counter, so the ceiling they can reach is the sum of the threads' own rates, which this measures. On one thread the
// two agree. The yardsticks of `lava bench` (fma_peak.cpp) are measured this way.
#include <omp.h>

#include <algorithm>
#include <vector>

namespace lava {

// One run of about `seconds`: every thread calls work(units), which returns the flops it did, again and again until
// the deadline; a thread overruns it by at most one call.
template <class Work>
double team_rate_gflops(int threads, long units, double seconds, const Work& work) {
  double flops = 0;
  const double t0 = omp_get_wtime(), deadline = t0 + seconds;
#pragma omp parallel num_threads(std::max(1, threads)) reduction(+ : flops)
  do flops += work(units);
  while (omp_get_wtime() < deadline);
  return flops / (omp_get_wtime() - t0) * 1e-9;
}

// Calibrates one call of work(units) to ~1/50 of a run (so the deadline is overrun by ≤ 2 %), then returns the
// median of `runs` runs of ~run_seconds each.
template <class Work>
double median_team_rate_gflops(int threads, int runs, double run_seconds, const Work& work) {
  long units = 1 << 6;
  work(units);  // warm: first touch of the thread's operands
  const double t0 = omp_get_wtime();
  work(units);
  const double dt = std::max(1e-6, omp_get_wtime() - t0);
  units = std::max(1L, long(double(units) * run_seconds / 50 / dt));
  std::vector<double> rates;
  for (int r = 0; r < std::max(1, runs); ++r) rates.push_back(team_rate_gflops(threads, units, run_seconds, work));
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace lava
