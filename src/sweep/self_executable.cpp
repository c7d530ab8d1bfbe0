#include "sweep/self_executable.hpp"

#include <cctype>
#include <filesystem>

#include "core/check.hpp"

namespace lava {

std::string self_executable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError("cannot find the lava executable (/proc/self/exe): " + ec.message());
  return p.string();
}

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::string_view("/._-+=:,@%").find(c) != std::string_view::npos);
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace lava
