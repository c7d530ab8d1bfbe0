#include "cli/positional_args.hpp"

#include <algorithm>

namespace lava {

SplitArgs split_positional(int argc, char** argv, std::initializer_list<std::string_view> switches) {
  SplitArgs s;
  s.options.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      s.positional.emplace_back(a);
      continue;
    }
    s.options.emplace_back(a);
    const bool is_switch = a == "--help" || a == "-h" || a == "--quiet" || a == "-q" ||
                           std::find(switches.begin(), switches.end(), a) != switches.end();
    if (!is_switch && a.find('=') == std::string_view::npos && i + 1 < argc) s.options.emplace_back(argv[++i]);
  }
  return s;
}

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> v;
  for (std::string& a : args) v.push_back(a.data());
  v.push_back(nullptr);
  return v;
}

}  // namespace lava
