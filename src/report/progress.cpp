#include "report/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include <fmt/format.h>

namespace lava {

namespace {
std::atomic<bool> g_quiet{false};
constexpr auto kTtyInterval = std::chrono::milliseconds(100);
constexpr auto kLogInterval = std::chrono::seconds(10);
constexpr int kBarWidth = 20;
}  // namespace

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "--:--";
  auto s = static_cast<int64_t>(seconds);
  if (s < 3600) return fmt::format("{:02}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

double eta_seconds(int64_t done, int64_t total, double elapsed_s) {
  if (total <= 0 || done <= 0 || !(elapsed_s >= 0)) return NAN;
  if (done >= total) return 0.0;
  return elapsed_s * double(total - done) / double(done);
}

std::string format_progress_line(std::string_view label, int64_t done, int64_t total, double elapsed_s,
                                 std::string_view extra, int bar_width) {
  std::string s(label);
  if (total > 0) {
    const double frac = std::clamp(double(done) / double(total), 0.0, 1.0);
    fmt::format_to(std::back_inserter(s), " {:3}%", int(std::floor(100.0 * frac)));
    if (bar_width > 0) {
      int filled = int(std::floor(bar_width * frac));
      s += " [" + std::string(size_t(filled), '#') + std::string(size_t(bar_width - filled), '.') + "]";
    }
    fmt::format_to(std::back_inserter(s), " {}/{} {}<{}", done, total, format_duration(elapsed_s),
                   format_duration(eta_seconds(done, total, elapsed_s)));
  } else {
    fmt::format_to(std::back_inserter(s), " {} {}", done, format_duration(elapsed_s));
  }
  if (!extra.empty()) s += " | " + std::string(extra);
  return s;
}

Progress::Progress(int64_t total, std::string label, bool quiet)
    : Progress(total, std::move(label), stderr, ::isatty(STDERR_FILENO) == 1) {
  quiet_ = quiet_ || quiet;
}

Progress::Progress(int64_t total, std::string label, std::FILE* out, bool tty)
    : total_(total), label_(std::move(label)), out_(out), tty_(tty), quiet_(g_quiet.load()) {
  start_ = last_draw_ = Clock::now();
  winsize ws{};
  if (tty_ && ::ioctl(::fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) columns_ = ws.ws_col;
}

Progress::~Progress() {
  if (tty_ && drawn_ && !finished_ && !quiet_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

void Progress::set_quiet(bool quiet) { g_quiet.store(quiet); }

double Progress::seconds_since_start(Clock::time_point now) const {
  return std::chrono::duration<double>(now - start_).count();
}

void Progress::update(int64_t done, std::string_view extra) {
  done_ = done;
  if (!extra.empty()) extra_.assign(extra);
  if (quiet_ || finished_) return;
  auto now = Clock::now();
  // Terminal: first update at once, then every 100 ms. Log: every 10 s (the first after 10 s of work).
  bool due = tty_ ? (!drawn_ || now - last_draw_ >= kTtyInterval) : (now - last_draw_ >= kLogInterval);
  if (due) draw(now);
}

void Progress::finish(std::string_view extra) {
  if (finished_) return;
  if (!extra.empty()) extra_.assign(extra);
  if (!quiet_) {
    draw(Clock::now());
    if (tty_) std::fputc('\n', out_);
    std::fflush(out_);
  }
  finished_ = true;
}

void Progress::draw(Clock::time_point now) {
  std::string line = format_progress_line(label_, done_, total_, seconds_since_start(now), extra_, tty_ ? kBarWidth : 0);
  if (tty_) {
    if (line.size() >= size_t(columns_)) line.resize(size_t(columns_ - 1));
    size_t len = line.size();
    if (len < last_len_) line.append(last_len_ - len, ' ');
    last_len_ = len;
    std::fputc('\r', out_);
    std::fputs(line.c_str(), out_);
  } else {
    std::fputs((line + '\n').c_str(), out_);
  }
  std::fflush(out_);
  last_draw_ = now;
  drawn_ = true;
}

}  // namespace lava
