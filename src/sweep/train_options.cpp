#include "sweep/train_options.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

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

std::set<std::string> train_option_names(const std::string& lava, const std::string& task) {
  const std::string cmd = shell_quote(lava) + " train --task " + shell_quote(task) + " --help 2>/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw InputError("cannot run " + cmd);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  const int status = ::pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw InputError(fmt::format("`{}` failed: cannot list the options of lava train --task {}", cmd, task));
  // Boost's help lists one option per line: "  --name arg (=default)  text" or "  -q [ --quiet ]  text".
  std::set<std::string> names;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (!line.starts_with("  ")) continue;
    line.remove_prefix(line.find_first_not_of(' '));
    if (line.size() > 5 && line[0] == '-' && line[1] != '-' && line.substr(2, 3) == " [ ") line.remove_prefix(5);
    if (!line.starts_with("--")) continue;
    line.remove_prefix(2);
    size_t n = 0;
    while (n < line.size() && (std::isalnum(static_cast<unsigned char>(line[n])) || line[n] == '-')) ++n;
    if (n) names.emplace(line.substr(0, n));
  }
  if (names.empty()) throw InputError(fmt::format("`{}` listed no options", cmd));
  return names;
}

}  // namespace lava
