#pragma once
// A progress line on stderr for long work:
//   Progress p(total, "train"); for (...) p.update(done, "loss 3.21 | 1234 tok/s"); p.finish();
// On a terminal it redraws one line in place (carriage return) at most 10 times a second:
//   train  42% [########............] 420/1000 00:12<00:17 | loss 3.21 | 1234 tok/s
// When stderr is a file or pipe it never writes '\r': a plain line at most every 10 s, and one at finish().
// Quiet (per object, or process-wide for --quiet) writes nothing. Call from one thread only.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace lava {

// Pure pieces, unit-tested.
// "MM:SS", or "H:MM:SS" from one hour; "--:--" when unknown (negative, NaN, Inf). Truncates to seconds.
std::string format_duration(double seconds);
// Seconds left at the average rate so far: elapsed * (total - done) / done; NaN when unknown.
double eta_seconds(int64_t done, int64_t total, double elapsed_s);
// The whole progress line (no '\r', no newline). bar_width 0 leaves the bar out; total <= 0 means
// "unknown total" (no percent, bar or ETA).
std::string format_progress_line(std::string_view label, int64_t done, int64_t total, double elapsed_s,
                                 std::string_view extra, int bar_width);

class Progress {
 public:
  Progress(int64_t total, std::string label, bool quiet = false);
  // Explicit stream and terminal-ness (tests, or a log file).
  Progress(int64_t total, std::string label, std::FILE* out, bool tty);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();  // ends a half-drawn terminal line so later messages start on their own line

  void update(int64_t done, std::string_view extra = {});
  void finish(std::string_view extra = {});  // final line; empty extra keeps the last one

  static void set_quiet(bool quiet);  // process-wide, for --quiet

 private:
  using Clock = std::chrono::steady_clock;
  void draw(Clock::time_point now);
  double seconds_since_start(Clock::time_point now) const;

  int64_t total_;
  std::string label_;
  std::FILE* out_;
  bool tty_;
  bool quiet_;
  int columns_ = 80;  // terminal width; lines are cut to fit so '\r' redraws stay on one row
  Clock::time_point start_, last_draw_;
  bool drawn_ = false, finished_ = false;
  int64_t done_ = 0;
  std::string extra_;
  size_t last_len_ = 0;  // to blank out the tail of a longer previous line
};

}  // namespace lava
