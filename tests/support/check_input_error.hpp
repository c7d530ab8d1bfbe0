#pragma once
// Runs f, which must throw a lava::InputError whose message contains every one of `parts` (its file, line and
// problem); the two-argument form names a path and, if given, one more part.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/check.hpp"

template <class F>
void check_input_error_parts(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL("no InputError; expected one naming " << parts.front());
  } catch (const lava::InputError& e) {
    std::string msg = e.what();
    INFO(msg);
    for (const auto& part : parts) CHECK_MESSAGE(msg.find(part) != std::string::npos, part);
  }
}

template <class F>
void check_input_error(F&& f, const std::string& path, const std::string& needle = "") {
  check_input_error_parts(f, {path, needle});
}
