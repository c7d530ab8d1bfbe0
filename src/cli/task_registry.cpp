#include "cli/task_registry.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

// One line per task: its commands, defined in cli/cmd_<task>.cpp.
TaskCommands nmt_commands();
TaskCommands vqa_commands();
TaskCommands caption_commands();
TaskCommands seqvae_commands();

const TaskRegistry& task_registry() {
  static const TaskRegistry tasks({nmt_commands(), vqa_commands(), caption_commands(), seqvae_commands()});
  return tasks;
}

TaskRegistry::TaskRegistry(std::vector<TaskCommands> tasks) : tasks_(std::move(tasks)) {
  if (tasks_.empty()) throw std::invalid_argument("a task registry needs a task");
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const std::string name = tasks_[i].name ? tasks_[i].name : "";
    if (name.empty()) throw std::invalid_argument("a task without a name");
    for (size_t j = 0; j < i; ++j)
      if (name == tasks_[j].name) throw std::invalid_argument("task \"" + name + "\" is registered twice");
  }
}

const TaskCommands& TaskRegistry::find(const std::string& name) const {
  for (const TaskCommands& t : tasks_)
    if (name == t.name) return t;
  throw UsageError("unknown task " + quote_input(name) + " (" + names(", ") + ")");
}

std::vector<std::string> TaskRegistry::names() const {
  std::vector<std::string> out;
  for (const TaskCommands& t : tasks_) out.emplace_back(t.name);
  return out;
}

std::string TaskRegistry::names(std::string_view separator) const {
  std::string out;
  for (const TaskCommands& t : tasks_) out += (out.empty() ? "" : std::string(separator)) + t.name;
  return out;
}

std::vector<std::string> TaskRegistry::crosschecked() const {
  std::vector<std::string> out;
  for (const TaskCommands& t : tasks_)
    if (t.crosscheck.dump) out.emplace_back(t.name);
  return out;
}

std::unique_ptr<CommandLine> task_command_line(const TaskRegistry& tasks, const TaskCommands& t, TaskVerb verb) {
  std::unique_ptr<CommandLine> cl = verb == TaskVerb::train ? t.train_command_line() : t.eval_command_line();
  const char* command = verb == TaskVerb::train ? "train" : "eval";
  cl->options().add_options()("task", po::value<std::string>()->default_value(t.name),
                              fmt::format("{} (lava {} --task TASK --help lists a task's options)",
                                          tasks.names(" | "), command)
                                  .c_str());
  return cl;
}

int run_task_command(const TaskRegistry& tasks, TaskVerb verb, int argc, char** argv) {
  const TaskCommands& t = tasks.find(task_of(argc, argv, tasks.default_task().name));
  const std::unique_ptr<CommandLine> cl = task_command_line(tasks, t, verb);
  if (!cl->parse(argc, argv)) return 0;
  // A --config file cannot switch tasks: the command line was read as this task's.
  if (cl->get_string("task") != t.name)
    cl->fail(fmt::format("--task {} in the config file, but the command line is --task {}",
                         quote_input(cl->get_string("task")), t.name));
  return verb == TaskVerb::train ? t.train(*cl) : t.eval(*cl);
}

std::set<std::string> train_option_names(const TaskRegistry& tasks, const std::string& task) {
  const std::vector<std::string> names = task_command_line(tasks, tasks.find(task), TaskVerb::train)->option_names();
  return {names.begin(), names.end()};
}

std::set<std::string> eval_option_names(const TaskRegistry& tasks, const std::string& task) {
  const std::vector<std::string> names = task_command_line(tasks, tasks.find(task), TaskVerb::eval)->option_names();
  return {names.begin(), names.end()};
}

int cmd_train(int argc, char** argv) { return run_task_command(task_registry(), TaskVerb::train, argc, argv); }
int cmd_eval(int argc, char** argv) { return run_task_command(task_registry(), TaskVerb::eval, argc, argv); }

}  // namespace lava
