#include "sweep/redirected_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <new>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

int run_redirected(const CommandEntry& command, std::vector<std::string> args, int out_fd, int err_fd,
                   const std::string& out_path, const std::string& err_path) {
  const std::string name = "lava " + (args.empty() ? std::string("?") : args.front());
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = ::dup(1), saved_err = ::dup(2);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  int rc = 1;
  try {
    rc = command(std::move(args));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    rc = 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory\n", name.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  // A failed write leaves its stream's error flag set. The flag is read here, while the streams still go to the
  // run's files, and cleared: left set, main() would blame the terminal's standard output for the run's file.
  const bool out_lost = std::ferror(stdout) || (::fsync(out_fd) != 0 && errno != EINVAL && errno != EROFS);
  const bool err_lost = std::ferror(stderr) || (::fsync(err_fd) != 0 && errno != EINVAL && errno != EROFS);
  std::clearerr(stdout);
  std::clearerr(stderr);
  ::dup2(saved_out, 1);
  ::dup2(saved_err, 2);
  ::close(saved_out);
  ::close(saved_err);
  for (const auto& [lost, path] : {std::pair{out_lost, &out_path}, std::pair{err_lost, &err_path}}) {
    if (!lost) continue;
    const std::string note = fmt::format("lava sweep: {}: cannot write (a write to it failed; is the disk full?): the "
                                         "run's output is incomplete\n", quote_input(*path));
    // Into the run's log as well, if that can still be written (it may be on the same full disk).
    if (path == &out_path) {
      [[maybe_unused]] const ssize_t n = ::write(err_fd, note.data(), note.size());
    }
    std::fputs(note.c_str(), stderr);
    if (rc == 0) rc = 1;
  }
  return rc;
}

}  // namespace lava
