#pragma once
// Positional arguments (lava sweep plan FILE, lava report DIR...) beside the options CommandLine parses: every
// option takes one value (--name VALUE or --name=VALUE) except the switches --help/-h and --quiet/-q, so a word
// that is neither an option nor an option's value is positional. A command's own switches are named in `switches`.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace lava {

struct SplitArgs {
  std::vector<std::string> positional;
  std::vector<std::string> options;  // options[0] is the command name, for CommandLine::parse
};

SplitArgs split_positional(int argc, char** argv, std::initializer_list<std::string_view> switches = {});

// argv-style pointers into `args` (valid while `args` lives and is not changed).
std::vector<char*> argv_of(std::vector<std::string>& args);

}  // namespace lava
