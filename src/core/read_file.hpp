#pragma once
// Reading a user's input files with a bound. Each reader states how much its format can sensibly hold (ReadLimit),
// so that a device, an endless pipe or a wrong file is one line naming it, never a read until memory runs out:
//   a regular file     its size is checked against the limit before anything is read;
//   a pipe or FIFO     read until the limit, then refused (its size is not known in advance);
//   a terminal,        read as a pipe (a person typing ends it);
//   /dev/null
//   any other device   refused at once: /dev/zero and /dev/urandom never end, a disk is not an input file;
//   a directory        refused.
// Formats with no natural bound (JSON-lines logs that grow over a run) are read line by line with LineReader,
// whose bound is on one line.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lava {

struct ReadLimit {
  std::uint64_t bytes;
  const char* format;  // in the message: "larger than 1 MiB, the limit for <format>"
};

inline constexpr std::uint64_t kMiB = std::uint64_t(1) << 20;
// Config files, sweep files, toy parameters, a run's run.json and status.json: a few hundred lines at most.
inline constexpr ReadLimit kSettingsLimit{kMiB, "a settings file"};
// Corpora, vocabularies, questions, captions, scene files, alignments, translate's input: text a CPU run can train
// or decode in reasonable time is far below this.
inline constexpr ReadLimit kTextDataLimit{1024 * kMiB, "a text data file"};
// Model files: parameters and vocabularies. The largest model the training limits allow in a day on a CPU is far
// below this; the whole file is held in memory while it is checked.
inline constexpr ReadLimit kModelLimit{4096 * kMiB, "a model file"};
// One line of a JSON-lines log (an epoch's or a run's summary: a few hundred bytes).
inline constexpr std::uint64_t kMaxJsonLine = 4 * kMiB;

// The whole file, at most limit.bytes. Throws InputError "PATH: larger than 1 MiB, the limit for a settings file",
// "PATH: is a device, not a file", "PATH: is a directory, not a file", or "PATH: cannot open: <strerror>" (read).
std::string read_file(const std::string& path, ReadLimit limit);

// "1 MiB", "4 GiB", "300 bytes": a limit as the messages print it.
std::string size_text(std::uint64_t bytes);

// A file's lines, one at a time, each at most max_line bytes (the '\n' not counted; a last line without one is
// kept). The same file rules as read_file, without the limit on the whole. A longer line throws InputError
// "PATH:N: line longer than 4 MiB".
class LineReader {
 public:
  LineReader(const std::string& path, std::uint64_t max_line);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line into `line` (without its '\n'); false at the end of the file.
  bool next(std::string& line);
  long line_number() const { return line_no_; }  // of the line next() returned last
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::uint64_t max_line_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;  // unread bytes of buf_
  bool eof_ = false;
  long line_no_ = 0;
};

}  // namespace lava
