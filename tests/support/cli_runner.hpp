#pragma once
// Runs the built `lava` binary (path from $LAVA_BIN, set by `make test`) and captures stdout, stderr, exit code.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <unistd.h>

struct CliResult {
  int code = -1;
  std::string out, err;
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

inline std::string lava_bin() {
  const char* b = std::getenv("LAVA_BIN");
  return b ? b : "build/lava";
}

// The lines of text, without their '\n' (a last line without one is kept).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// The length of the longest line of text: an error message echoing a user's input must stay one short line.
inline size_t longest_line(const std::string& text) {
  size_t best = 0;
  for (const std::string& line : lines_of(text)) best = std::max(best, line.size());
  return best;
}

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("lava_test_" + std::to_string(getpid()) + "_" + name)).string();
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Runs the shell command `cmd` (stdin from /dev/null) and captures its stdout, stderr and exit code.
inline CliResult run_captured(const std::string& cmd) {
  const std::string out = temp_path("stdout"), err = temp_path("stderr");
  const std::string full = cmd + " >" + out + " 2>" + err + " </dev/null";
  const int status = std::system(full.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

// `args` is appended to the binary path verbatim (shell syntax).
inline CliResult run_lava(const std::string& args) { return run_captured(lava_bin() + " " + args); }

// Runs SCRIPT with bash from the repository root (make test runs the tests there) and captures its output.
inline CliResult run_bash(const std::string& script) {
  const std::string body = temp_path("bash_body.sh");
  write_text(body, script);
  const CliResult r = run_captured("bash " + body);
  std::remove(body.c_str());
  return r;
}

// "ulimit -v KB; " before a command, to bound the memory a child may map; empty when the child is built with
// AddressSanitizer (make sanitize sets LAVA_CHILD_SANITIZED; its test objects are not instrumented themselves),
// whose shadow memory reserves terabytes of address space before main runs, so that any such limit stops the
// sanitized binary at start: there the command's timeout alone bounds it.
inline std::string memory_limit(long kb) {
  if (std::getenv("LAVA_CHILD_SANITIZED")) return "";
  return "ulimit -v " + std::to_string(kb) + "; ";
}
