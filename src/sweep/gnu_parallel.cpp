#include "sweep/gnu_parallel.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "core/check.hpp"

extern char** environ;

namespace lava {

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void record_stop(int sig) {
  if (!g_stop) g_stop = sig;
}

}  // namespace

int run_with_gnu_parallel(const std::vector<std::string>& commands, const GnuParallelOptions& o) {
  std::vector<std::string> args = {"parallel", "--will-cite", "--line-buffer", "--jobs", std::to_string(o.jobs),
                                   "--termseq", "TERM,60000,KILL,25"};
  if (!o.sshlogin.empty()) args.insert(args.end(), {"--sshlogin", o.sshlogin});
  if (!o.joblog.empty()) args.insert(args.end(), {"--joblog", o.joblog});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) throw InputError(std::string("cannot make a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipe_fd[0], 0);
  posix_spawn_file_actions_addclose(&fa, pipe_fd[0]);
  posix_spawn_file_actions_addclose(&fa, pipe_fd[1]);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, led by parallel
  pid_t pid = 0;
  const int err = ::posix_spawnp(&pid, "parallel", &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(pipe_fd[0]);
  if (err != 0) {
    ::close(pipe_fd[1]);
    throw InputError(std::string("cannot run GNU parallel (") + std::strerror(err) +
                     "): install it (apt-get install parallel), or run the commands of `lava sweep plan` yourself");
  }

  g_stop = 0;
  struct sigaction sa {}, old_int, old_term, old_pipe;
  sa.sa_handler = record_stop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old_pipe);  // parallel gone early: write() fails with EPIPE instead

  std::string input;
  for (const std::string& c : commands) input += c + "\n";
  for (size_t done = 0; done < input.size() && !g_stop;) {
    const ssize_t n = ::write(pipe_fd[1], input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  ::close(pipe_fd[1]);

  int status = 0;
  bool forwarded = false;
  while (true) {
    if (g_stop && !forwarded) {
      ::kill(-pid, SIGTERM);  // once, to parallel and its jobs
      forwarded = true;
    }
    const pid_t w = ::waitpid(pid, &status, 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      status = -1;
      break;
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  if (g_stop) return 128 + int(g_stop);
  if (status == -1 || !WIFEXITED(status)) throw InputError("GNU parallel ended abnormally");
  return WEXITSTATUS(status);
}

}  // namespace lava
