#include "train/save_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/check.hpp"

namespace lava {

SaveLock::SaveLock(const std::string& model_path) {
  if (model_path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(model_path, ec))
    throw input_error(model_path, 0, "--save names a directory, not a model file");
  const std::string path = model_path + ".lock";
  // Another run may remove the lock file between our open and our flock (its destructor): then the lock we got is on
  // a file no longer at `path`, and we try again on the new one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw input_error(model_path, 0, fmt::format("cannot write --save here: {} ({})", std::strerror(errno), path));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char buf[32] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      const std::string pid = n > 0 ? std::string(buf, size_t(n)) : std::string("unknown");
      throw input_error(model_path, 0, fmt::format("in use by another run (PID {}, which holds {}); give this run "
                                                   "another --save", pid.substr(0, pid.find_first_of("\n ")), path));
    }
    struct stat at_path {}, ours {};
    if (::fstat(fd, &ours) == 0 && ::stat(path.c_str(), &at_path) == 0 && at_path.st_ino == ours.st_ino &&
        at_path.st_dev == ours.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
        const int err = errno;
        ::close(fd);
        throw input_error(path, 0, fmt::format("cannot write the lock file: {}", std::strerror(err)));
      }
      path_ = path;
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
  throw input_error(path, 0, "cannot take the lock: the file keeps being replaced");
}

SaveLock::~SaveLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still locked: a run waiting on this file sees it gone and opens a new one
  ::close(fd_);
}

}  // namespace lava
