#pragma once
// The validation lines ("event":"epoch") of a training's JSON output, without the fields that time it, which differ
// between runs that agree bit for bit.
#include <regex>
#include <string>
#include <vector>

#include "support/cli_runner.hpp"

// Whether a validation line is a stop's own partial validation (not on an uninterrupted run's trajectory).
inline bool is_partial(const std::string& line) { return line.find("\"partial\":true") != std::string::npos; }

// A stop's own partial validation is kept only if `keep_partial`.
inline std::vector<std::string> epoch_lines(const std::string& text, bool keep_partial) {
  static const std::regex timing("\"(seconds|cpu_seconds|tokens_per_s)\":[^,}]*,?");
  std::vector<std::string> out;
  for (const std::string& l : lines_of(text))
    if (l.find("\"event\":\"epoch\"") != std::string::npos && (keep_partial || !is_partial(l)))
      out.push_back(std::regex_replace(l, timing, ""));
  return out;
}
