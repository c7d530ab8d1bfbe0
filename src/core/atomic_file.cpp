#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.hpp"

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

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw io_error(path, "cannot create file", errno);
  // From here on every exit path either renames tmp into place or removes it.
  auto abandon = [&](const char* what, int err) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    return io_error(path, what, err);
  };
  errno = 0;  // so a stdio failure inside write() leaves its own errno for the message below
  try {
    write(f);
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::ferror(f)) throw abandon("cannot write", errno ? errno : EIO);
  if (std::fflush(f) != 0) throw abandon("cannot write", errno);
  if (::fsync(::fileno(f)) != 0) throw abandon("cannot sync", errno);
  int close_rc = std::fclose(f);
  f = nullptr;
  if (close_rc != 0) throw abandon("cannot write", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw abandon("cannot rename the temporary file into place", errno);
  // Make the rename itself durable; failing here loses nothing that was promised, so errors are ignored.
  int dir = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, [&](std::FILE* f) {
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
  });
}

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw io_error(path, "cannot open", errno);
  std::string out;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) out.append(chunk, n);
  int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err) throw io_error(path, "cannot read", err);
  return out;
}

}  // namespace lava
