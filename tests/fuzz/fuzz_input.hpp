#pragma once
// Shared by the libFuzzer harnesses (make fuzz). Each harness feeds one reader the fuzzer's bytes and lets only
// the errors a bad file is meant to raise pass: InputError (exit 1 in lava) and UsageError. Anything else — a
// sanitizer report, a failed LAVA_CHECK (std::logic_error), bad_alloc from a size taken on trust, a hang — ends the
// run as a crash, which is a defect to fix.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/check.hpp"

namespace lava_fuzz {

inline std::string_view bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A scratch directory of this process (under /dev/shm when there is one), for readers that take a path.
inline const std::string& scratch_dir() {
  // Never destroyed: the atexit handler that removes the directory runs after static destructors.
  static const std::string* dir = [] {
    const char* base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    auto* d = new std::string(std::string(base) + "/lava_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

// Writes `text` to scratch_dir()/name and returns the path.
inline std::string scratch_file(const std::string& name, std::string_view text) {
  const std::string path = scratch_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), f) != text.size()) std::abort();
  std::fclose(f);
  return path;
}

// Runs the reader; the errors that report a bad file are the expected outcome.
template <class F>
void expect_clean(F&& read) {
  try {
    read();
  } catch (const lava::InputError&) {
  } catch (const lava::UsageError&) {
  }
}

}  // namespace lava_fuzz
