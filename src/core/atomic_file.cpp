#include "core/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "core/check.hpp"
#include "core/read_file.hpp"

namespace lava {

namespace {

InputError io_error(const std::string& path, const char* what, int err) {
  return input_error(path, 0, fmt::format("{}: {}", what, std::strerror(err)));
}

// Directory part of a path, for fsync after rename ("." when there is none).
std::string parent_dir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// N for "/dev/fd/N", "/proc/self/fd/N" and "/proc/<our pid>/fd/N"; -1 otherwise.
int own_descriptor(const std::string& path) {
  std::string_view p = path;
  const std::string own_proc = fmt::format("/proc/{}/fd/", static_cast<long>(::getpid()));
  for (std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"),
                                  std::string_view(own_proc)}) {
    if (!p.starts_with(prefix)) continue;
    std::string_view digits = p.substr(prefix.size());
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      return -1;
    return std::stoi(std::string(digits));
  }
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  return -1;
}

// Follows symlinks from `path` to the first name that is not one (it may not exist). Sets `fd` when a hop names
// one of the process's descriptors.
std::string follow_links(const std::string& path, int& fd) {
  std::string cur = path;
  fd = own_descriptor(cur);
  for (int hops = 0; fd < 0; ++hops) {
    struct stat st {};
    if (::lstat(cur.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
    if (hops == 40) throw io_error(path, "cannot resolve", ELOOP);
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(cur.c_str(), buf, sizeof buf - 1);
    if (n < 0) throw io_error(path, "cannot resolve the symlink", errno);
    std::string next(buf, size_t(n));
    cur = next.starts_with('/') ? next : parent_dir(cur) + "/" + next;
    fd = own_descriptor(cur);
  }
  return "";
}

// Removes `target.tmp.<pid>` files whose process is gone (a SIGKILL between create and rename leaves one).
void remove_stale_temp_files(const std::string& target) {
  const std::string prefix = base_name(target) + ".tmp.";
  const std::string dir = parent_dir(target);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (!name.starts_with(prefix)) continue;
    const std::string_view digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      continue;
    const long pid = std::stol(std::string(digits));
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    // kill(pid, 0) fails with ESRCH only when no such process exists; EPERM means it lives (someone else's).
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;
    (void)::unlinkat(::dirfd(d), std::string(name).c_str(), 0);
  }
  ::closedir(d);
}

// Runs `write` on `f` and checks the stream; `name` is what messages call it. Does not close f.
void write_checked(std::FILE* f, const std::string& name, const std::function<void(std::FILE*)>& write) {
  errno = 0;  // so a stdio failure inside write() leaves its own errno for the message below
  write(f);
  if (std::ferror(f)) throw io_error(name, "cannot write", errno ? errno : EIO);
  if (std::fflush(f) != 0) throw io_error(name, "cannot write", errno);
}

// Writes into an existing non-regular file (FIFO, device) or a descriptor of ours, in place.
void write_through(std::FILE* f, const std::string& path, const std::function<void(std::FILE*)>& write) {
  try {
    write_checked(f, path, write);
  } catch (...) {
    std::fclose(f);
    throw;
  }
  if (std::fclose(f) != 0) throw io_error(path, "cannot write", errno);
}

void write_replacing(const std::string& path, const std::string& target, const struct stat* old,
                     const std::function<void(std::FILE*)>& write) {
  remove_stale_temp_files(target);
  const std::string tmp = fmt::format("{}.tmp.{}", target, static_cast<long>(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wbx");
  if (!f && errno == EEXIST) {  // our own pid's leftover (a previous process with the same pid)
    std::remove(tmp.c_str());
    f = std::fopen(tmp.c_str(), "wbx");
  }
  if (!f) throw io_error(path, "cannot create file", errno);
  // From here on every exit path either renames tmp into place or removes it.
  auto abandon = [&](const char* what, int err) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    return io_error(path, what, err);
  };
  try {
    write_checked(f, path, write);
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (old) (void)::fchmod(::fileno(f), old->st_mode & 07777);  // keep the replaced file's permissions
  if (::fsync(::fileno(f)) != 0) throw abandon("cannot sync", errno);
  int close_rc = std::fclose(f);
  f = nullptr;
  if (close_rc != 0) throw abandon("cannot write", errno);
  if (std::rename(tmp.c_str(), target.c_str()) != 0)
    throw abandon("cannot rename the temporary file into place", errno);
  // Make the rename itself durable; failing here loses nothing that was promised, so errors are ignored.
  int dir = ::open(parent_dir(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

}  // namespace

std::string resolve_output_target(const std::string& path) {
  if (path == "-") return "";
  int fd = -1;
  std::string target = follow_links(path, fd);
  return fd >= 0 ? "" : target;
}

void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write) {
  if (path.empty()) throw input_error("(empty path)", 0, "cannot create file: the path is empty");
  if (path == "-") {
    write_checked(stdout, "standard output", write);
    return;
  }
  int fd = -1;
  const std::string target = follow_links(path, fd);
  if (fd >= 0) {
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) throw io_error(path, "cannot write", errno);
    std::FILE* f = ::fdopen(copy, "wb");
    if (!f) {
      ::close(copy);
      throw io_error(path, "cannot write", errno);
    }
    if (fd == 1) std::fflush(stdout);  // what was already printed comes first
    write_through(f, path, write);
    return;
  }
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw input_error(path, 0, "is a directory, not a file");
    if (!S_ISREG(st.st_mode)) {
      const int out = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
      if (out < 0) throw io_error(path, "cannot open for writing", errno);
      std::FILE* f = ::fdopen(out, "wb");
      if (!f) {
        ::close(out);
        throw io_error(path, "cannot write", errno);
      }
      write_through(f, path, write);
      return;
    }
    write_replacing(path, target, &st, write);
    return;
  }
  write_replacing(path, target, nullptr, write);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, [&](std::FILE* f) {
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
  });
}

std::string read_file(const std::string& path) {
  return read_file(path, ReadLimit{UINT64_MAX, "a file"});  // devices still refused: /dev/zero would never end
}

void check_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0) {
    const int err = errno;
    std::clearerr(stdout);
    throw io_error("standard output", "cannot write", err);
  }
  // An earlier flush failed (its errno is gone by now): the stream's error flag still says so.
  if (std::ferror(stdout)) {
    std::clearerr(stdout);
    throw input_error("standard output", 0, "cannot write (a write to it failed; is the disk full?)");
  }
}

}  // namespace lava
