#pragma once
// Decorators for test cases that need something this machine or this build may lack. A skipped test case is
// reported as skipped in the closing line (tests/support/main.cpp), never counted as passed.
//   TEST_CASE("name" * skip_unless_profiling_build()) { ... }
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/op_profile.hpp"

// The op profile, the GEMM work counters and the OpenMP region wrapper exist only in the profiling build
// (make PROFILE=1, as make bench builds): their tests run there. A test body that calls them sits in #if LAVA_PROFILE.
inline doctest::skip skip_unless_profiling_build() { return doctest::skip(!lava::op_profile::kBuilt); }

// A program on PATH (e.g. "parallel"), looked up once when the test cases are registered.
inline bool program_on_path(const std::string& name) {
  const std::string cmd = "command -v " + name + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}
inline doctest::skip skip_unless_program(const std::string& name) { return doctest::skip(!program_on_path(name)); }

// A file or directory that an optional Debian package installs.
inline doctest::skip skip_unless_exists(const char* path) { return doctest::skip(::access(path, F_OK) != 0); }
