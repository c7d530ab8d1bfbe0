#include "cli/eval_examples.hpp"

#include <algorithm>
#include <memory>

#include "cli/task_registry.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

int64_t eval_examples(const std::vector<std::string>& args) {
  LAVA_CHECK(!args.empty() && args[0] == "eval", "eval_examples takes a lava eval command line");
  std::vector<std::string> words = args;
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  const std::string task = task_of(int(argv.size()), argv.data(), task_registry().default_task().name);
  const TaskCommands& t = task_registry().find(task);
  const std::unique_ptr<CommandLine> cl = task_command_line(task_registry(), t, TaskVerb::eval);
  // read, not parse: the line's --threads and --quiet are the evaluation's, not this process's.
  LAVA_CHECK(cl->read(int(argv.size()), argv.data()), "an evaluation's options asked for --help");
  if (!t.eval_examples)
    throw InputError("the estimate cannot count the examples of a " + quote_input(task) + " evaluation");
  const int64_t n = t.eval_examples(*cl);
  const int64_t limit = cl->get_int("limit", 0, INT64_MAX);
  return limit > 0 ? std::min(n, limit) : n;
}

}  // namespace lava
