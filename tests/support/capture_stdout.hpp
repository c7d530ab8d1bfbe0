#pragma once
// For tests that call the CLI functions in-process (cli/commands.hpp): stdout captured into a file, its JSON lines
// parsed, and a command run on an argument list.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/json.hpp"

// Captures stdout into a file while alive (the training loop and the CLI functions print there).
struct CaptureStdout {
  std::string path;
  int saved;
  explicit CaptureStdout(std::string p) : path(std::move(p)) {
    std::fflush(stdout);
    saved = dup(1);
    std::FILE* f = std::fopen(path.c_str(), "w");
    dup2(fileno(f), 1);
    std::fclose(f);
  }
  std::string finish() {
    if (saved < 0) return lava::read_file(path);
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved);
    saved = -1;
    return lava::read_file(path);
  }
  ~CaptureStdout() {  // restores stdout when a failed REQUIRE leaves the test early
    if (saved >= 0) std::fflush(stdout), dup2(saved, 1), close(saved);
  }
  CaptureStdout(const CaptureStdout&) = delete;
  CaptureStdout& operator=(const CaptureStdout&) = delete;
};

inline std::vector<lava::JsonValue> json_lines(const std::string& out) {
  std::vector<lava::JsonValue> rows;
  size_t begin = 0;
  for (size_t end; (end = out.find('\n', begin)) != std::string::npos; begin = end + 1)
    rows.push_back(lava::parse_json(out.substr(begin, end - begin), "stdout"));
  return rows;
}

inline int run(int (*cmd)(int, char**), std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cmd(int(argv.size()), argv.data());
}
