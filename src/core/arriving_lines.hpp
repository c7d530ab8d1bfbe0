#pragma once
// Lines from a descriptor as they arrive (standard input: a pipe, a terminal, a file). next_batch hands over the
// complete lines already read, at most `max` of them, and waits for input only when it has none: a person typing
// gets the answer to each line as soon as it is entered, and a pipe full of lines is taken in batches.
#include <cstdint>
#include <string>
#include <vector>

namespace lava {

class ArrivingLines {
 public:
  // `name` is what messages call the input ("-" for standard input); a line may hold at most max_line bytes.
  ArrivingLines(int fd, std::string name, std::uint64_t max_line);

  // The next lines, without their '\n' (a last line without one is kept); false when the input has ended and no
  // line is left. InputError "NAME:N: line longer than ..." or "NAME: cannot read: ...".
  bool next_batch(std::vector<std::string>& lines, size_t max);
  // The 1-based number of the first line of the batch next_batch returned last.
  long first_line_number() const { return first_line_; }
  const std::string& name() const { return name_; }

 private:
  bool input_waiting() const;  // bytes can be read without blocking
  void read_some();            // one blocking read into buffer_, or end_ at the end of the input

  int fd_;
  std::string name_;
  std::uint64_t max_line_;
  std::string buffer_;  // read but not yet handed over
  bool end_ = false;
  long lines_handed_ = 0, first_line_ = 0;
};

}  // namespace lava
