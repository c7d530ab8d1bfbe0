#pragma once
// JSON lines: one JSON object per line, as lava's --format json prints them and as training logs collect them over
// the sessions of a run (lava report's metrics.jsonl, the experiment scripts' *.train.jsonl, lava plot's inputs).
// A log grows with its run, so it is streamed: one line in memory at a time, each at most kMaxJsonLine bytes
// (core/read_file.hpp), and no bound on the number of lines.
#include <string>

#include "core/json.hpp"
#include "core/read_file.hpp"

namespace lava {

// The objects of a JSON-lines file, in order, read as the loop asks for them; blank lines are skipped. A line that is
// not one JSON object throws input_error(path, line, what), with the file's own line number:
//   for (const JsonValue& j : read_json_lines(path)) ...
class JsonLines {
 public:
  explicit JsonLines(const std::string& path) : lines_(path, kMaxJsonLine) {}

  struct End {};
  class Iterator {
   public:
    explicit Iterator(JsonLines* lines) : lines_(lines) {}
    const JsonValue& operator*() const { return lines_->current_; }
    Iterator& operator++() {
      lines_->advance();
      return *this;
    }
    bool operator!=(End) const { return !lines_->done_; }

   private:
    JsonLines* lines_;
  };
  Iterator begin() {
    advance();
    return Iterator(this);
  }
  End end() const { return {}; }

 private:
  void advance();
  LineReader lines_;
  std::string line_;
  JsonValue current_;
  bool done_ = false;
};

inline JsonLines read_json_lines(const std::string& path) { return JsonLines(path); }

}  // namespace lava
