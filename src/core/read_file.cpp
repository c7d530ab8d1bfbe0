#include "core/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.hpp"

namespace lava {

namespace {

InputError io_error(const std::string& path, const char* what, int err) {
  return input_error(path, 0, fmt::format("{}: {}", what, std::strerror(err)));
}

// Opens `path` for reading and applies the rules of read_file.hpp to what it is; returns the stream and its status.
std::FILE* open_input(const std::string& path, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw io_error(path, "cannot open", errno);
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw io_error(path, "cannot open", err);
  }
  const char* refused = nullptr;
  if (S_ISDIR(st.st_mode)) refused = "is a directory, not a file";
  const bool dev_null = S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
  if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !dev_null && !::isatty(fd))
    refused = "is a device, not a file";
  std::FILE* f = refused ? nullptr : ::fdopen(fd, "rb");
  if (!f) {
    const int err = errno;
    ::close(fd);
    if (refused) throw input_error(path, 0, refused);
    throw io_error(path, "cannot open", err);
  }
  return f;
}

InputError too_large(const std::string& path, ReadLimit limit) {
  return input_error(path, 0, fmt::format("larger than {}, the limit for {}", size_text(limit.bytes), limit.format));
}

}  // namespace

std::string size_text(std::uint64_t bytes) {
  if (bytes >= kMiB * 1024 && bytes % (kMiB * 1024) == 0) return fmt::format("{} GiB", bytes / (kMiB * 1024));
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  return fmt::format("{} bytes", bytes);
}

std::string read_file(const std::string& path, ReadLimit limit) {
  struct stat st {};
  std::FILE* f = open_input(path, st);
  std::string out;
  if (S_ISREG(st.st_mode)) {
    if (std::uint64_t(st.st_size) > limit.bytes) {
      std::fclose(f);
      throw too_large(path, limit);
    }
    out.reserve(size_t(st.st_size));
  }
  // A regular file may still grow while it is read, and a pipe's size is known only at its end: stop one byte past
  // the limit either way.
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (out.size() + n > limit.bytes) {
      std::fclose(f);
      throw too_large(path, limit);
    }
    out.append(chunk, n);
  }
  const int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err) throw io_error(path, "cannot read", err);
  return out;
}

LineReader::LineReader(const std::string& path, std::uint64_t max_line) : path_(path), max_line_(max_line) {
  struct stat st {};
  f_ = open_input(path, st);
}

LineReader::~LineReader() {
  if (f_) std::fclose(f_);
}

bool LineReader::next(std::string& line) {
  line.clear();
  for (;;) {
    const char* at = buf_.data() + begin_;
    // memchr's pointer must not be null even for 0 bytes, and an empty buffer's data() may be.
    const char* nl = begin_ < end_ ? static_cast<const char*>(std::memchr(at, '\n', end_ - begin_)) : nullptr;
    const size_t take = nl ? size_t(nl - at) : end_ - begin_;
    if (line.size() + take > max_line_)
      throw input_error(path_, line_no_ + 1, fmt::format("line longer than {}", size_text(max_line_)));
    line.append(at, take);
    begin_ += take;
    if (nl) {
      ++begin_;
      ++line_no_;
      return true;
    }
    if (eof_) {
      if (line.empty()) return false;
      ++line_no_;
      return true;
    }
    buf_.resize(1 << 16);
    begin_ = 0;
    end_ = std::fread(buf_.data(), 1, buf_.size(), f_);
    if (end_ < buf_.size()) {
      if (std::ferror(f_)) throw io_error(path_, "cannot read", errno);
      eof_ = true;
    }
  }
}

}  // namespace lava
