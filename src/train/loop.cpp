#include "train/loop.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/check.hpp"
#include "core/cpu_time.hpp"
#include "core/stop_signal.hpp"
#include "nn/optim.hpp"
#include "report/progress.hpp"
#include "train/loop_option_table.hpp"
#include "train/resume_state.hpp"

namespace lava {

double figure(const Figures& f, const std::string& name) {
  for (const auto& [n, v] : f)
    if (n == name) return v;
  return NAN;
}

namespace {

class Loop {
 public:
  Loop(TrainTask& task, std::string task_name, const TrainLoopOptions& opt)
      : task_(task),
        name_(std::move(task_name)),
        opt_(opt),
        num_sums_(task.sum_names().size()),
        run_(identity()),
        state_path_(opt.save.empty() ? "" : resume_state_path(opt.save)) {
    adam_.lr = float(opt.lr);
    st_.lr = adam_.lr;
    st_.sums.assign(num_sums_, 0.0);
    if (!opt.resume.empty()) {
      st_ = load_train_state(opt.resume, name_, run_, num_sums_, task_.params(), adam_);
      seconds_before_ = st_.seconds, cpu_seconds_before_ = st_.cpu_seconds;
    }
  }

  LoopSummary run();

 private:
  RunIdentity identity() const {
    RunIdentity id = task_.identity();
    RunIdentity loop{{"--batch-size", exact(opt_.batch_size)}};
    const RunIdentity rows = option_identity(loop_option_table(), opt_);
    loop.insert(loop.end(), rows.begin(), rows.end());
    loop.push_back({"--seed", exact(opt_.seed)});
    id.insert(id.end() - (id.empty() || id.back().first != "data" ? 0 : 1), loop.begin(), loop.end());
    return id;
  }
  // Training time over all sessions of the run.
  double elapsed() const {
    return seconds_before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - session_start_).count();
  }
  // The process CPU time of the training over all sessions (validations and saves included; NaN propagates).
  double cpu_elapsed() const { return cpu_seconds_before_ + (process_cpu_seconds() - session_cpu_start_); }
  bool steps_reached() const { return opt_.max_steps > 0 && st_.step >= opt_.max_steps; }
  bool minutes_reached() const { return opt_.max_minutes > 0 && elapsed() >= 60 * opt_.max_minutes; }
  bool bound_reached() const { return steps_reached() || minutes_reached(); }
  bool out_of_patience() const { return opt_.patience > 0 && st_.stale_epochs >= opt_.patience; }
  bool train_step(const std::vector<int>& batch);  // false: the loss or gradient was not finite (nothing changed)
  ValidationRecord validation(size_t batches);
  void keep_if_better(const ValidationRecord& r);
  void emit(const ValidationRecord& r, const std::vector<ValidationRecord>& history);
  void plot(const ValidationRecord& r, const std::vector<ValidationRecord>& history);  // --plot, under a SaveShield
  void end_epoch(size_t batches);
  void validate_inside_epoch(size_t batches);
  void stop_inside_epoch(size_t batches);
  void write_state();

  TrainTask& task_;
  const std::string name_;
  const TrainLoopOptions& opt_;
  const size_t num_sums_;
  const RunIdentity run_;
  const std::string state_path_;
  Adam<float> adam_;
  TrainState st_;
  LoopSummary summary_;
  double seconds_before_ = 0;  // training time of the sessions before this one
  double cpu_seconds_before_ = 0;  // their CPU time
  std::chrono::steady_clock::time_point session_start_;
  double session_cpu_start_ = 0;
};

bool Loop::train_step(const std::vector<int>& batch) {
  const StepResult r = task_.step(batch, st_.step);
  LAVA_CHECK(r.sums.size() == num_sums_, "the task gave {} training sums, not {}", r.sums.size(), num_sums_);
  const bool loss_finite = std::isfinite(r.loss);
  const float norm = loss_finite ? grad_norm(task_.params()) : 0.f;
  if (!loss_finite || !std::isfinite(norm)) {
    std::fprintf(stderr,
                 "lava train: the %s became %f at step %lld; stopping before that update (the best model and the "
                 "last resume state are kept)\n",
                 loss_finite ? "gradient norm" : "loss", double(loss_finite ? norm : r.loss), (long long)st_.step);
    return false;
  }
  adam_.step(task_.params(), clip_factor(norm, float(opt_.clip)));
  ++st_.step, ++st_.batch;
  st_.units += r.units;
  for (size_t i = 0; i < num_sums_; ++i) st_.sums[i] += r.sums[i];
  return true;
}

// The validation of the model as it stands, with the training sums since the last one.
ValidationRecord Loop::validation(size_t batches) {
  ValidationRecord r;
  r.valid = task_.validate();
  r.epoch = st_.epoch;
  r.position = double(st_.epoch - 1) + double(st_.batch) / double(std::max<size_t>(1, batches));
  r.steps = st_.step, r.seconds = elapsed(), r.cpu_seconds = cpu_elapsed(), r.lr = adam_.lr;
  r.train = st_.sums;
  r.partial = st_.batch < int64_t(batches);
  r.best = r.valid.criterion > st_.best.criterion;
  return r;
}

// The best-model file only ever gets a model that beats the one it holds.
void Loop::keep_if_better(const ValidationRecord& r) {
  if (!(r.valid.criterion > st_.kept.criterion)) return;
  {
    SaveShield shield;
    task_.save_best(opt_.save, r);
  }
  st_.kept = r.valid;
  st_.kept_epoch = r.epoch, st_.kept_position = r.position;
}

void Loop::emit(const ValidationRecord& r, const std::vector<ValidationRecord>& history) {
  const ReportLine line = task_.report(r, history);
  if (opt_.format == OutputFormat::json) {
    std::printf("%s\n", line.json.str().c_str());
  } else if (!opt_.quiet) {
    std::fprintf(stderr, "%s\n", line.text.c_str());
  }
  std::fflush(stdout);
}

void Loop::plot(const ValidationRecord& r, const std::vector<ValidationRecord>& history) {
  SaveShield shield;
  task_.write_plots(r, history);
}

// Validation at the end of epoch st_.epoch: best model, learning-rate decay, the line; then the state moves on to
// the next epoch and is written, and only then the pictures, whose failure must not cost the epoch.
void Loop::end_epoch(size_t batches) {
  LAVA_CHECK(st_.batch == int64_t(batches), "end_epoch after {} of {} batches", st_.batch, batches);
  ValidationRecord r = validation(batches);
  if (r.best) {
    st_.best = r.valid;
    st_.stale_epochs = 0;
  } else {
    ++st_.stale_epochs;
    if (st_.epoch >= opt_.start_decay_at) adam_.lr *= float(opt_.lr_decay);
  }
  st_.lr = adam_.lr;
  keep_if_better(r);
  st_.history.push_back(r);
  emit(r, st_.history);
  summary_.epochs = st_.epoch;
  ++st_.epoch;
  st_.batch = 0;
  st_.validated_at = st_.step;
  st_.sums.assign(num_sums_, 0.0);
  write_state();
  plot(r, st_.history);
}

// A validation every valid_every updates inside an epoch: part of the trajectory (it can set the run's best), but
// the learning rate and patience move only at epoch ends.
void Loop::validate_inside_epoch(size_t batches) {
  const ValidationRecord r = validation(batches);
  if (r.best) st_.best = r.valid;
  keep_if_better(r);
  st_.history.push_back(r);
  emit(r, st_.history);
  plot(r, st_.history);
  st_.validated_at = st_.step;
  st_.sums.assign(num_sums_, 0.0);
}

// max_steps or max_minutes stopped the run inside an epoch. The state written first is the run's trajectory; the
// validation after it is not part of it, so it changes neither the learning rate nor the run's best; the state is
// written again only if its model replaced the best-model file (the figure that file holds is in the state).
void Loop::stop_inside_epoch(size_t batches) {
  write_state();
  const double kept_before = st_.kept.criterion;
  const ValidationRecord r = validation(batches);
  keep_if_better(r);
  std::vector<ValidationRecord> history = st_.history;
  history.push_back(r);
  emit(r, history);
  summary_.epochs = st_.epoch;
  summary_.history.push_back(r);
  if (st_.kept.criterion != kept_before) write_state();
  plot(r, history);
}

void Loop::write_state() {
  if (state_path_.empty()) return;
  st_.seconds = elapsed(), st_.cpu_seconds = cpu_elapsed();
  SaveShield shield;
  save_train_state(state_path_, name_, st_, run_, task_.params(), adam_);
  summary_.resume_state = state_path_;
}

LoopSummary Loop::run() {
  session_start_ = std::chrono::steady_clock::now(), session_cpu_start_ = process_cpu_seconds();
  summary_.epochs = st_.epoch - 1;
  StopSignalGuard guard;  // from here on SIGINT/SIGTERM stop after the update in progress
  std::vector<std::vector<int>> batches;
  int batches_epoch = 0;  // the epoch `batches` belongs to
  std::optional<Progress> progress;
  auto stop_here = [&] {
    progress.reset();
    summary_.stop_epoch = st_.epoch, summary_.stop_batch = st_.batch, summary_.stop_batches = int64_t(batches.size());
  };
  // Each pass makes one move from where the run stands (epoch st_.epoch, st_.batch of its batches done): stop,
  // validate a finished epoch, or train on the next batch. A signal is seen after the update it arrived in.
  while (st_.epoch <= opt_.epochs && !out_of_patience()) {
    if (batches_epoch != st_.epoch) {
      batches = task_.epoch_batches(st_.epoch);
      batches_epoch = st_.epoch;
      if (st_.batch > int64_t(batches.size()))
        throw input_error(opt_.resume, 0, fmt::format("resume state at batch {} of an epoch of {}", st_.batch,
                                                      batches.size()));
    }
    if (const int sig = stop_signal_received()) {
      stop_here();
      write_state();
      summary_.stop_signal = sig;
      summary_.stop_reason = "signal";
      break;
    }
    if (st_.batch == int64_t(batches.size())) {
      if (progress) progress->finish();
      progress.reset();
      end_epoch(batches.size());
      continue;
    }
    if (bound_reached()) {
      stop_here();
      summary_.stop_reason = steps_reached() ? "max-steps" : "max-minutes";
      if (st_.batch > 0 && st_.step > st_.validated_at) stop_inside_epoch(batches.size());
      break;
    }
    if (!progress)
      progress.emplace(int64_t(batches.size()), st_.batch == 0 ? fmt::format("epoch {}", st_.epoch)
                                                               : fmt::format("epoch {} (from {})", st_.epoch, st_.batch));
    if (!train_step(batches[size_t(st_.batch)])) {
      stop_here();
      summary_.stopped_on_nan = true;
      summary_.stop_reason = "nan";
      break;
    }
    progress->update(st_.batch, task_.progress_text(st_.sums, st_.step, st_.units / std::max(1e-9, elapsed())));
    if (opt_.valid_every > 0 && st_.step % opt_.valid_every == 0 && st_.batch < int64_t(batches.size())) {
      progress->finish();
      progress.reset();
      validate_inside_epoch(batches.size());
    }
    if (opt_.checkpoint_every > 0 && st_.step % opt_.checkpoint_every == 0) write_state();
  }
  if (summary_.stop_reason.empty()) summary_.stop_reason = out_of_patience() ? "patience" : "epochs";
  std::vector<ValidationRecord> history = st_.history;
  history.insert(history.end(), summary_.history.begin(), summary_.history.end());
  summary_.history = std::move(history);
  summary_.kept = st_.kept;
  summary_.kept_epoch = st_.kept_epoch, summary_.kept_position = st_.kept_position;
  summary_.steps = st_.step;
  summary_.seconds = elapsed(), summary_.cpu_seconds = cpu_elapsed();
  summary_.units_per_second = st_.units / std::max(1e-9, summary_.seconds);
  return summary_;
}

}  // namespace

LoopSummary train_loop(const std::string& task_name, const TrainLoopOptions& opt, TrainTask& task,
                       const SaveLock& lock) {
  LAVA_CHECK(lock.path() == (opt.save.empty() ? "" : opt.save + ".lock"), "the lock is not on --save");
  return Loop(task, task_name, opt).run();
}

}  // namespace lava
