#pragma once
// A fresh directory per test under the system temp folder, removed (with everything in it) at the end.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

struct TempDir {
  std::filesystem::path dir;

  explicit TempDir(std::string_view tag = "t") {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("lava_test_" + std::string(tag) + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (dir / name).string(); }
  // Names in the directory (to spot left-over temp files).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
    return out;
  }
  size_t entries() const { return names().size(); }
};
