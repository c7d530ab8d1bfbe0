#include "core/arriving_lines.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.hpp"
#include "core/read_file.hpp"

namespace lava {

ArrivingLines::ArrivingLines(int fd, std::string name, std::uint64_t max_line)
    : fd_(fd), name_(std::move(name)), max_line_(max_line) {}

bool ArrivingLines::input_waiting() const {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;  // readable, or at its end (POLLHUP): either way a read does not block
}

void ArrivingLines::read_some() {
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, size_t(n));
      return;
    }
    if (n == 0) {
      end_ = true;
      return;
    }
    if (errno != EINTR) throw input_error(name_, 0, fmt::format("cannot read: {}", std::strerror(errno)));
  }
}

bool ArrivingLines::next_batch(std::vector<std::string>& lines, size_t max) {
  lines.clear();
  first_line_ = lines_handed_ + 1;
  size_t taken = 0;  // bytes of buffer_ handed over in this batch
  for (;;) {
    for (size_t nl = 0; lines.size() < max && (nl = buffer_.find('\n', taken)) != std::string::npos; taken = nl + 1)
      lines.push_back(buffer_.substr(taken, nl - taken));
    if (lines.size() == max) break;
    const uint64_t pending = buffer_.size() - taken;  // holds no '\n': a line still arriving
    if (pending > max_line_)
      throw input_error(name_, lines_handed_ + long(lines.size()) + 1,
                        fmt::format("line longer than {}", size_text(max_line_)));
    if (end_) {
      if (pending) lines.push_back(buffer_.substr(taken));  // the last line, without its '\n'
      taken = buffer_.size();
      break;
    }
    if (!lines.empty() && !input_waiting()) break;  // answer what has come rather than wait for more
    read_some();
  }
  buffer_.erase(0, taken);
  lines_handed_ += long(lines.size());
  return !lines.empty();
}

}  // namespace lava
