#include "sweep/lifeline.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/check.hpp"

namespace lava {

namespace {

// The descriptor LAVA_SWEEP_LIFELINE names, or -1 when there is none or it is not a pipe (an inherited variable
// whose descriptor was closed or reused on the way must not be waited on).
int lifeline_fd() {
  const char* text = std::getenv(kLifelineEnv);
  if (!text || !*text) return -1;
  char* end = nullptr;
  const long fd = std::strtol(text, &end, 10);
  struct stat st {};
  if (*end || fd < 3 || fd > 1 << 20 || ::fstat(int(fd), &st) != 0 || !S_ISFIFO(st.st_mode)) return -1;
  return int(fd);
}

// End-of-file on the pipe (nobody ever writes to it): the write end's holder is gone.
bool wait_for_end(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  while (true) {
    const int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

}  // namespace

Lifeline make_lifeline() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw InputError(std::string("cannot make a pipe: ") + std::strerror(errno));
  ::fcntl(fds[0], F_SETFD, 0);  // the read end goes to every child
  return {fds[0], fds[1]};
}

bool watch_lifeline() {
  const int fd = lifeline_fd();
  if (fd < 0) return true;
  if (wait_for_end(fd, 0)) return false;
  std::thread([fd] {
    wait_for_end(fd, -1);
    ::kill(::getpid(), SIGTERM);
  }).detach();
  return true;
}

}  // namespace lava
