#pragma once
// Runs f, which must throw a lava::InputError whose message names `path` (and `needle`, if given).
#include <doctest/doctest.h>

#include <string>

#include "core/check.hpp"

template <class F>
void check_input_error(F&& f, const std::string& path, const std::string& needle = "") {
  try {
    f();
    FAIL("no InputError for " << path << " (" << needle << ")");
  } catch (const lava::InputError& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find(path) != std::string::npos);
    CHECK(msg.find(needle) != std::string::npos);
  }
}
