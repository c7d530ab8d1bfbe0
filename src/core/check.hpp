#pragma once
// Errors that reach the user as one line on stderr.
//   UsageError: the command line is wrong (unknown option, value out of range)   -> exit 2
//   InputError: a file or its content is wrong; the message names file and line  -> exit 1
// Internal invariants use LAVA_CHECK, which throws std::logic_error with the source location:
// a failed invariant is a bug in LAVA, never the user's fault, and still must not crash.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace lava {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "FILE:LINE: what" (line 0 means the file as a whole: "FILE: what").
inline InputError input_error(const std::string& file, long line, const std::string& what) {
  if (line > 0) return InputError(fmt::format("{}:{}: {}", file, line, what));
  return InputError(fmt::format("{}: {}", file, what));
}

}  // namespace lava

#define LAVA_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw std::logic_error(fmt::format("internal check failed at {}:{}: {}", __FILE__, __LINE__, \
                                         fmt::format(__VA_ARGS__)));                               \
  } while (0)
