#pragma once
// What the sweep needs to know about the `lava` binary: its own path (for the commands it plans) and the options
// `lava train --task T` accepts, read from that command's --help, so a sweep file is checked against the very
// option list the runs will parse (and no second list can drift from it).
#include <set>
#include <string>

namespace lava {

// This process's executable, absolute (/proc/self/exe).
std::string self_executable();

// The long option names (without "--") `LAVA train --task TASK --help` lists. Throws InputError if it cannot run.
std::set<std::string> train_option_names(const std::string& lava, const std::string& task);

// `s` quoted for a POSIX shell when it needs quoting ('...' with ' written as '\'').
std::string shell_quote(const std::string& s);

}  // namespace lava
