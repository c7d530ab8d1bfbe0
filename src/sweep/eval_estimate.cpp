#include "sweep/eval_estimate.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "sweep/run_evals.hpp"

namespace lava {

namespace fs = std::filesystem;

EvalTimingSizes eval_timing_sizes(int64_t examples, int64_t n) {
  LAVA_CHECK(examples >= 1 && n >= 2, "eval_timing_sizes({}, {})", examples, n);
  EvalTimingSizes s;
  s.n2 = std::min(n, examples);
  s.n1 = std::max<int64_t>(1, s.n2 / 4);
  return s;
}

double seconds_per_example(int64_t n1, double cpu1, int64_t n2, double cpu2) {
  LAVA_CHECK(n1 >= 1 && n2 >= n1, "seconds_per_example({}, {})", n1, n2);
  if (n1 == n2) return cpu2 / double(n2);
  return std::max(0.0, (cpu2 - cpu1) / double(n2 - n1));
}

bool eval_option_untimed(const std::string& key) { return key == "limit"; }

EvalCost time_evaluation(const TimedTrainSetup& setup, const SweepFile& f, const SweepRun& r, const SweepEval& e,
                         const std::string& model, int64_t n, const EvalExamplesOf& examples_of,
                         const EvalTimer& timer) {
  // The section as the run gets it (what its examples are counted from), and without the options the timing sets.
  const fs::path dir(setup.scratch);
  const std::string config = (dir / ("eval-" + e.name + ".ini")).string();
  const std::string timing_config = (dir / ("eval-" + e.name + ".timing.ini")).string();
  SweepEval timed = e;
  std::erase_if(timed.options, [](const SweepOption& o) { return eval_option_untimed(o.key); });
  write_file_atomic(config, eval_config_text(e));
  write_file_atomic(timing_config, eval_config_text(timed));

  EvalCost c;
  c.name = e.name;
  {
    const InSweepDir in_sweep_dir(f);  // counted as lava eval runs, from the sweep file's directory
    c.examples = examples_of(eval_arguments(f, r, e, setup.threads, config, model));
  }
  if (c.examples <= 0) return c;
  EvalTimingSizes s = eval_timing_sizes(c.examples, n);
  std::fprintf(stderr, "lava sweep --estimate: evaluation %s of run %s: timing %lld and %lld of its %lld examples\n",
               one_line(e.name).c_str(), r.id.c_str(), (long long)s.n1, (long long)s.n2, (long long)c.examples);
  std::fflush(stderr);
  auto cpu_at = [&](int64_t limit) {
    std::vector<std::string> args = eval_arguments(f, r, timed, setup.threads, timing_config, model);
    args.insert(args.end(), {"--limit", std::to_string(limit)});
    return timer(args);
  };
  const double cpu1 = s.n1 < s.n2 ? cpu_at(s.n1) : 0;
  double cpu2 = cpu_at(s.n2);
  // A cheap evaluation's difference can drown in the noise of the fixed cost: n₂ grows until the difference is at
  // least cpu(n₁) (load included) or n₂ is the whole split.
  while (s.n1 < s.n2 && s.n2 < c.examples && cpu2 - cpu1 < cpu1) {
    s.n2 = std::min(c.examples, kEvalTimingGrowth * s.n2);
    std::fprintf(stderr, "lava sweep --estimate: evaluation %s of run %s: timing %lld of them\n",
                 one_line(e.name).c_str(), r.id.c_str(), (long long)s.n2);
    cpu2 = cpu_at(s.n2);
  }
  c.example_s = seconds_per_example(s.n1, cpu1, s.n2, cpu2);
  std::fprintf(stderr, "lava sweep --estimate: evaluation %s of run %s: %.4g s an example, %.4g core-hours\n",
               one_line(e.name).c_str(), r.id.c_str(), c.example_s, c.core_seconds() / 3600);
  return c;
}

}  // namespace lava
