#include "sweep/gnu_parallel.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "core/check.hpp"
#include "sweep/lifeline.hpp"

extern char** environ;

namespace lava {

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void record_stop(int sig) {
  if (!g_stop) g_stop = sig;
}

// Starts GNU parallel in a process group of its own, reading `input_fd` as its stdin, with the lifeline's read end
// (sweep/lifeline.hpp) and SIGHUP as its parent-death signal: if this process dies, even by SIGKILL, parallel ends
// and starts no further run. Returns its pid; throws InputError when it cannot be started.
pid_t spawn_gnu_parallel(std::vector<std::string> args, int input_fd, int lifeline_fd) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with(std::string(kLifelineEnv) + "=")) env_text.emplace_back(*e);
  env_text.push_back(std::string(kLifelineEnv) + "=" + std::to_string(lifeline_fd));
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  // exec's failure comes back through this close-on-exec pipe: a successful exec closes it with nothing written.
  int exec_error[2];
  if (::pipe2(exec_error, O_CLOEXEC) != 0) throw InputError(std::string("cannot make a pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGHUP);
    if (::getppid() != parent) ::_exit(129);  // the parent died before prctl took effect
    ::dup2(input_fd, 0);
    ::execvpe("parallel", argv.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] const ssize_t n = ::write(exec_error[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(exec_error[1]);
  if (pid < 0) {
    ::close(exec_error[0]);
    throw InputError(std::string("cannot start GNU parallel: ") + std::strerror(errno));
  }
  ::setpgid(pid, pid);  // also here: the group exists before any signal is forwarded to it
  int err = 0;
  ssize_t n;
  while ((n = ::read(exec_error[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  if (n > 0) {
    ::waitpid(pid, nullptr, 0);
    throw InputError(std::string("cannot run GNU parallel (") + std::strerror(err) +
                     "): install it (apt-get install parallel), or run the commands of `lava sweep plan` yourself");
  }
  return pid;
}

}  // namespace

int run_with_gnu_parallel(const std::vector<std::string>& commands, const GnuParallelOptions& o) {
  // --null: commands are NUL-terminated, so a newline inside a quoted path stays inside its command.
  std::vector<std::string> args = {"parallel", "--will-cite", "--null", "--line-buffer", "--jobs", std::to_string(o.jobs),
                                   "--termseq", "TERM,60000,KILL,25"};
  if (!o.sshlogin.empty()) args.insert(args.end(), {"--sshlogin", o.sshlogin});
  if (!o.joblog.empty()) args.insert(args.end(), {"--joblog", o.joblog});

  int pipe_fd[2];
  if (::pipe2(pipe_fd, O_CLOEXEC) != 0) throw InputError(std::string("cannot make a pipe: ") + std::strerror(errno));
  const Lifeline lifeline = make_lifeline();
  pid_t pid = 0;
  try {
    pid = spawn_gnu_parallel(std::move(args), pipe_fd[0], lifeline.read_fd);
  } catch (...) {
    for (int fd : {pipe_fd[0], pipe_fd[1], lifeline.read_fd, lifeline.write_fd}) ::close(fd);
    throw;
  }
  ::close(pipe_fd[0]);
  ::close(lifeline.read_fd);

  g_stop = 0;
  struct sigaction sa {}, old_int, old_term, old_hup, old_pipe;
  sa.sa_handler = record_stop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGHUP, &sa, &old_hup);  // the terminal closed: parallel's own group does not get its SIGHUP
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old_pipe);  // parallel gone early: write() fails with EPIPE instead

  std::string input;
  for (const std::string& c : commands) input += c + '\0';
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
  ::sigaction(SIGHUP, &old_hup, nullptr);
  ::close(lifeline.write_fd);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  if (g_stop) return 128 + int(g_stop);
  if (status == -1 || !WIFEXITED(status)) throw InputError("GNU parallel ended abnormally");
  return WEXITSTATUS(status);
}

}  // namespace lava
