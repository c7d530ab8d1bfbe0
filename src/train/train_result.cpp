#include "train/train_result.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "core/stop_signal.hpp"

namespace lava {

namespace {

int print_signal_stop(const TrainLoopOptions& opt, const TrainResult& r) {
  const LoopSummary& s = r.loop;
  const std::string where = fmt::format("after step {} (epoch {}, {} of {} batches)", s.steps, s.stop_epoch,
                                        s.stop_batch, s.stop_batches);
  if (opt.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "stopped").add("task", r.task).add("signal", signal_name(s.stop_signal)).add("steps", s.steps);
    j.add("epoch", s.stop_epoch).add("batch", s.stop_batch).add("resume_state", s.resume_state);
    std::printf("%s\n", j.str().c_str());
    std::fflush(stdout);
  }
  if (s.resume_state.empty())
    std::fprintf(stderr, "lava train: stopped by %s %s; nothing saved (no --save)\n",
                 signal_name(s.stop_signal).c_str(), where.c_str());
  else
    std::fprintf(stderr,
                 "lava train: stopped by %s %s; state saved to %s: to continue, run the same command with "
                 "--resume %s\n",
                 signal_name(s.stop_signal).c_str(), where.c_str(), s.resume_state.c_str(), s.resume_state.c_str());
  return 128 + s.stop_signal;
}

}  // namespace

int print_train_result(const TrainLoopOptions& opt, const TrainResult& r) {
  if (r.loop.stop_signal) return print_signal_stop(opt, r);
  const LoopSummary& s = r.loop;
  if (opt.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "done").add("task", r.task);
    for (const auto& [name, value] : r.about) j.add(name, value);
    j.add("steps", s.steps).add("epochs", s.epochs).add("best_epoch", r.best_epoch).add("stop", s.stop_reason);
    j.add("seconds", s.seconds).add("cpu_seconds", s.cpu_seconds).add(r.units + "_per_s", s.units_per_second);
    for (const auto& [name, value] : r.best) j.add(name, value);
    j.add("nan", s.stopped_on_nan);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::string what = r.task, best;
    for (const auto& [name, value] : r.about)
      what += " " + name + " " + (value.is_string() ? value.str() : fmt::format("{}", value.number()));
    for (const auto& [name, value] : r.best) best += fmt::format(", {} {:.6g}", name, value);
    std::printf("trained %s: %lld steps in %.1f s (%.0f %s/s), stopped by %s; best valid (epoch %.2f)%s\n",
                what.c_str(), (long long)s.steps, s.seconds, s.units_per_second, r.units.c_str(),
                s.stop_reason.c_str(), r.best_epoch, best.c_str());
  }
  std::fflush(stdout);
  return s.stopped_on_nan ? 1 : 0;
}

}  // namespace lava
