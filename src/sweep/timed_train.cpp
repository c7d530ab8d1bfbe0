#include "sweep/timed_train.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/cpu_time.hpp"
#include "core/json.hpp"
#include "core/quote_input.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

// The last non-empty line of `text` (what a failed lava train said last: its error).
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

// fork + exec of `args` in `dir` with stdout and stderr to the two files; the exit status and the child's rusage.
int run_child(const std::vector<std::string>& args, const std::string& dir, const std::string& out_path,
              const std::string& err_path, rusage& usage) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) throw input_error(out < 0 ? out_path : err_path, 0, std::string("cannot create: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw InputError(std::string("cannot start a timing run: ") + std::strerror(errno));
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    if (::chdir(dir.c_str()) != 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out);
  ::close(err);
  int status = 0;
  while (::wait4(pid, &status, 0, &usage) < 0)
    if (errno != EINTR) throw InputError(std::string("waiting for a timing run: ") + std::strerror(errno));
  return status;
}

// run_child, and InputError "the timing run of WHAT failed (exit N): its last stderr line" unless it exits 0; returns
// the child's user + system seconds.
double run_timed_child(const char* what, const std::vector<std::string>& args, const std::string& dir,
                       const std::string& out_path, const std::string& err_path) {
  rusage usage{};
  const int status = run_child(args, dir, out_path, err_path, usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string said = last_line(read_file(err_path));
    throw InputError(one_line(fmt::format("the timing run of {} failed ({}): {}", what,
                                          WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                                            : fmt::format("signal {}", WTERMSIG(status)),
                                          said.empty() ? "it wrote nothing to stderr" : said)));
  }
  return cpu_seconds(usage);
}

}  // namespace

TrainTiming parse_train_timing(const std::string& json_lines, const std::string& source) {
  TrainTiming t;
  bool have_validation = false, have_done = false;
  long line_no = 0;
  for (size_t start = 0; start < json_lines.size();) {
    size_t end = json_lines.find('\n', start);
    if (end == std::string::npos) end = json_lines.size();
    const std::string line = json_lines.substr(start, end - start);
    start = end + 1, ++line_no;
    if (line.empty() || line[0] != '{') continue;
    const JsonValue j = parse_json(line, source);
    const JsonValue* event = j.find("event");
    if (!event || !event->is_string()) continue;
    if (event->str() == "epoch") {
      t.steps = j.at("steps").as_int();
      t.loop_seconds = j.at("seconds").number();
      ++t.validations;
      have_validation = true;
    } else if (event->str() == "done") {
      // With one validation (the one max-steps stopped at) the run's best is it, at steps / batches an epoch.
      t.epoch_position = j.at("best_epoch").number();
      have_done = true;
    }
  }
  if (!have_validation || !have_done)
    throw input_error(source, line_no, have_done ? "no validation line (\"event\":\"epoch\") in the timing run's output"
                                                 : "no done line in the timing run's output");
  if (!(t.steps > 0 && t.epoch_position > 0))
    throw input_error(source, line_no, fmt::format("the timing run made {} updates at epoch position {}", t.steps,
                                                   t.epoch_position));
  return t;
}

TrainTiming time_train(const TimedTrainSetup& s, const std::vector<std::pair<std::string, std::string>>& options,
                       int64_t steps) {
  std::string config;
  for (const auto& [k, v] : options) {
    LAVA_CHECK(k != "max-steps" && k != "save" && k != "resume", "the timing run sets {} itself", k);
    config += k + " = " + v + "\n";
  }
  const fs::path dir(s.scratch);
  const std::string config_path = (dir / "config.ini").string(), model = (dir / kTimingModelFile).string();
  const std::string out_path = (dir / "metrics.jsonl").string(), err_path = (dir / "train.log").string();
  // Each timing starts afresh: no resume state or best model of an earlier one.
  std::error_code ec;
  for (const std::string& p : {model, model + ".resume"}) fs::remove(p, ec);
  write_file_atomic(config_path, config);
  const std::vector<std::string> args = {s.lava,      "train",      "--task", s.task, "--config", config_path,
                                         "--max-steps", std::to_string(steps), "--threads", std::to_string(s.threads),
                                         "--save",    model,        "--format", "json", "--quiet"};
  const double cpu = run_timed_child("lava train", args, s.workdir, out_path, err_path);
  TrainTiming t = parse_train_timing(read_file(out_path), out_path);
  t.cpu_seconds = cpu;
  return t;
}

double time_eval(const TimedTrainSetup& s, const std::vector<std::string>& eval_args) {
  LAVA_CHECK(!eval_args.empty() && eval_args[0] == "eval", "time_eval runs lava eval");
  std::vector<std::string> args = {s.lava};
  args.insert(args.end(), eval_args.begin(), eval_args.end());
  const fs::path dir(s.scratch);
  return run_timed_child("lava eval", args, s.workdir, (dir / "eval.jsonl").string(), (dir / "eval.log").string());
}

}  // namespace lava
