#include "sweep/run_evals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "report/run_record.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

std::string in_eval_dir(const SweepRun& r, const std::string& file) { return (fs::path(r.dir) / kRunEvalDir / file).string(); }

const SweepEval& find_eval(const SweepFile& f, const std::string& name) {
  for (const SweepEval& e : f.evals)
    if (e.name == name) return e;
  throw input_error(f.path, 0, "no [eval " + name + "] section");
}

int open_file(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  if (fd < 0) throw input_error(path, 0, std::string("cannot open for writing: ") + std::strerror(errno));
  return fd;
}

}  // namespace

std::string eval_result_path(const SweepRun& r, const std::string& name) { return in_eval_dir(r, name + ".jsonl"); }

std::vector<std::string> missing_evals(const SweepRun& r) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const std::string& name : r.evals)
    if (!fs::exists(eval_result_path(r, name), ec)) out.push_back(name);
  return out;
}

std::string eval_config_text(const SweepEval& e) {
  std::string out;
  for (const SweepOption& o : e.options) out += o.key + " = " + o.value + "\n";
  return out;
}

std::vector<std::string> eval_arguments(const SweepFile& f, const SweepRun& r, const SweepEval& e, int threads) {
  return eval_arguments(f, r, e, threads, in_eval_dir(r, e.name + ".ini"), (fs::path(r.dir) / kRunModelFile).string());
}

std::vector<std::string> eval_arguments(const SweepFile& f, const SweepRun& r, const SweepEval& e, int threads,
                                        const std::string& config, const std::string& model) {
  std::vector<std::string> a = {"eval",    "--task", f.task, "--config", config,
                                "--model", model,    "--format", "json", "--quiet"};
  const bool own_data = std::any_of(e.options.begin(), e.options.end(), [](const SweepOption& o) { return o.key == "data"; });
  if (!own_data)
    for (const auto& [k, v] : r.options)
      if (k == "data") a.insert(a.end(), {"--data", v});
  if (threads > 0) a.insert(a.end(), {"--threads", std::to_string(threads)});
  return a;
}

int run_missing_evals(const SweepFile& f, const SweepRun& r, int threads, const CommandEntry& eval,
                      const std::function<void(const std::string&)>& note) {
  const std::vector<std::string> names = missing_evals(r);
  if (names.empty()) return 0;
  LAVA_CHECK(bool(eval), "evaluations need lava eval's entry point");
  std::error_code ec;
  fs::create_directories(fs::path(r.dir) / kRunEvalDir, ec);
  if (ec) throw input_error(in_eval_dir(r, ""), 0, "cannot create the evaluation directory: " + ec.message());
  int first_failure = 0;
  for (const std::string& name : names) {
    const SweepEval& e = find_eval(f, name);
    const std::string result = eval_result_path(r, name), partial = result + ".tmp", log = in_eval_dir(r, name + ".log");
    write_file_atomic(in_eval_dir(r, name + ".ini"), eval_config_text(e));
    note("evaluation " + name + ": starting");
    const int out_fd = open_file(partial, O_TRUNC), err_fd = open_file(log, O_APPEND);
    int rc;
    {
      const InSweepDir in_sweep_dir(f);
      rc = run_redirected(eval, eval_arguments(f, r, e, threads), out_fd, err_fd, partial, log);
    }
    ::close(out_fd);
    ::close(err_fd);
    if (rc == 0 && fs::file_size(partial, ec) == 0) {
      const std::string why = "lava eval succeeded but wrote no JSON line\n";
      const int fd = open_file(log, O_APPEND);
      [[maybe_unused]] const ssize_t n = ::write(fd, why.data(), why.size());
      ::close(fd);
      rc = 1;
    }
    if (rc == 0) {
      fs::rename(partial, result, ec);
      if (ec) throw input_error(result, 0, "cannot rename the finished evaluation into place: " + ec.message());
      note("evaluation " + name + ": done, " + quote_input(result));
    } else {
      fs::remove(partial, ec);
      note(fmt::format("evaluation {}: failed (exit {}), see {}", name, rc, quote_input(log)));
      if (first_failure == 0) first_failure = rc;
    }
  }
  return first_failure;
}

}  // namespace lava
