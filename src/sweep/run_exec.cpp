#include "sweep/run_exec.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "report/run_record.hpp"
#include "sweep/run_evals.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

std::string in_run(const SweepRun& r, const char* name) { return (fs::path(r.dir) / name).string(); }

// "attn=soft lr=1e-3 seed=2": how notes name a run besides its id.
std::string describe(const SweepRun& r) {
  std::string s;
  for (const auto& [k, v] : r.grid) s += k + "=" + v + " ";
  return s + "seed=" + std::to_string(r.seed);
}

// One note about run `r` on stdout (the scheduler's log): "run ID (grid values): what", kept to one line whatever
// its paths and values hold.
void say(const SweepRun& r, const std::string& what) {
  std::printf("%s\n", one_line(fmt::format("run {} ({}): {}", r.id, describe(r), what)).c_str());
  std::fflush(stdout);
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string slurm_job() {
  const char* array_job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* array_task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (array_job && array_task) return std::string(array_job) + "_" + array_task;
  const char* job = std::getenv("SLURM_JOB_ID");
  return job ? job : "";
}

int open_append(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw input_error(path, 0, std::string("cannot open for appending: ") + std::strerror(errno));
  return fd;
}

// A session killed in the middle of a line leaves it unterminated: end it, so the next session's first line is
// a line of its own (lava report then names the broken one instead of a merged one).
void end_last_line(const std::string& path) {
  std::error_code ec;
  // Only a regular file has a last line to end (and a device such as /dev/zero would be read without end).
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) == 0) return;
  const std::string text = read_file(path);
  if (text.back() != '\n') {
    const int fd = open_append(path);
    const bool ok = ::write(fd, "\n", 1) == 1;
    ::close(fd);
    if (!ok) throw input_error(path, 0, "cannot append");
  }
}

}  // namespace

void prepare_run_dir(const SweepFile& f, const SweepRun& r) {
  std::error_code ec;
  fs::create_directories(r.dir, ec);
  if (ec) throw input_error(r.dir, 0, "cannot create the run directory: " + ec.message());
  const std::string config_path = in_run(r, kRunConfigFile), config = run_config_text(r);
  if (fs::exists(config_path)) {
    const std::string old_config = read_file(config_path);
    if (run_config_identity(old_config) != run_config_identity(config))
      throw input_error(config_path, 0, "holds other options than run " + r.id + " of " + quote_input(f.path) + ": move it away");
    // Only options that change no result differ (threads edited in the sweep file): the next session uses them.
    if (old_config != config) write_file_atomic(config_path, config);
  } else {
    write_file_atomic(config_path, config);
  }
  const std::string info_path = in_run(r, kRunInfoFile), info = run_info_json(f, r);
  if (!fs::exists(info_path) || read_file(info_path) != info) write_file_atomic(info_path, info);
}

std::vector<std::string> train_arguments(const SweepFile& f, const SweepRun& r, bool resume, const ExecOptions& o) {
  std::vector<std::string> a = {"train", "--task", f.task, "--config", in_run(r, kRunConfigFile),
                                "--save", in_run(r, kRunModelFile), "--format", "json", "--quiet"};
  if (resume) a.insert(a.end(), {"--resume", in_run(r, kRunModelFile) + std::string(".resume")});
  if (o.threads > 0) a.insert(a.end(), {"--threads", std::to_string(o.threads)});
  return a;
}

bool run_complete(const SweepRun& r) {
  return read_run_status(r.dir).state == RunState::finished && missing_evals(r).empty();
}

int run_sweep_task(const SweepFile& f, const SweepRun& r, const ExecOptions& o, const TrainEntry& train,
                   const CommandEntry& eval) {
  if (run_complete(r)) {
    say(r, "finished, skipped");
    return 0;
  }
  prepare_run_dir(f, r);
  // One session at a time per run: a second `lava sweep run` of the same file, or a task started twice, must not
  // train into the same files. The lock goes with this process (also when it is killed).
  const std::string lock_path = in_run(r, "lock");
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) throw input_error(lock_path, 0, std::string("cannot open: ") + std::strerror(errno));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0)
    throw input_error(lock_path, 0, "run " + r.id + " is running in another process (which holds this lock)");
  RunStatus status = read_run_status(r.dir);  // as the session before left it, now that no other can change it
  auto evaluate = [&] {
    const int rc = run_missing_evals(f, r, o.threads, eval, [&](const std::string& what) { say(r, what); });
    ::close(lock_fd);
    return rc;
  };
  if (status.state == RunState::finished) {
    if (missing_evals(r).empty()) say(r, "finished, skipped");
    return evaluate();
  }

  const std::string resume_state = in_run(r, kRunModelFile) + std::string(".resume");
  const bool resume = fs::exists(resume_state);
  status.state = RunState::running;
  status.exit_code = 0;
  status.signal.clear();
  status.sessions += 1;
  status.host = host_name();
  status.slurm_job = slurm_job();
  write_run_status(r.dir, status);

  const std::string metrics = in_run(r, kRunMetricsFile), log = in_run(r, kRunLogFile);
  end_last_line(metrics);
  const int out_fd = open_append(metrics), err_fd = open_append(log);
  const std::string where = status.slurm_job.empty() ? status.host : status.host + ", Slurm job " + status.slurm_job;
  const std::string start_note =
      resume ? fmt::format("lava sweep: run {} ({}) session {} on {}: resuming from {}\n", r.id, describe(r),
                           status.sessions, where, resume_state)
             : fmt::format("lava sweep: run {} ({}) session {} on {}: starting\n", r.id, describe(r), status.sessions, where);
  if (::write(err_fd, start_note.data(), start_note.size()) < 0) throw input_error(log, 0, "cannot write");
  std::fprintf(stderr, "%s\n", one_line(start_note.substr(0, start_note.size() - 1)).c_str());

  int rc;
  {
    const InSweepDir in_sweep_dir(f);
    rc = run_redirected(train, train_arguments(f, r, resume, o), out_fd, err_fd, metrics, log);
  }
  ::close(out_fd);
  ::close(err_fd);

  status.exit_code = rc;
  if (rc == 0) {
    status.state = RunState::finished;
  } else if (rc == 128 + SIGTERM || rc == 128 + SIGINT) {
    status.state = RunState::stopped;
    status.signal = rc == 128 + SIGTERM ? "SIGTERM" : "SIGINT";
  } else {
    status.state = RunState::failed;
  }
  write_run_status(r.dir, status);
  if (status.state == RunState::finished) {
    say(r, "finished");
    return evaluate();
  }
  ::close(lock_fd);
  if (status.state == RunState::stopped)
    say(r, "stopped by " + status.signal + ", resume state saved; run it again to continue");
  else
    say(r, fmt::format("failed (exit {}), see {}", rc, quote_input(log)));
  return rc;
}

}  // namespace lava
