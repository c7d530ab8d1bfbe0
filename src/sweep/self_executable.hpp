#pragma once
// What the sweep needs to know about the `lava` binary: its own path, for the commands it plans, and how to quote
// their words. (The options of `lava train --task T` come from the task registry, cli/task_registry.hpp.)
#include <string>

namespace lava {

// This process's executable, absolute (/proc/self/exe).
std::string self_executable();

// `s` quoted for a POSIX shell when it needs quoting ('...' with ' written as '\'').
std::string shell_quote(const std::string& s);

}  // namespace lava
