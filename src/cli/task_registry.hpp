#pragma once
// The tasks of `lava train` and `lava eval`. A task is its folder under src/tasks/, its commands (a TaskCommands,
// in cli/cmd_<task>.cpp) and one line in task_registry.cpp; dispatch, --task's help, the sweep's list of tasks and
// of their training options, and `lava crosscheck-dump`'s tasks and `make crosscheck`'s runs all come from here.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.hpp"

namespace lava {

namespace crosscheck {
struct CrosscheckOptions;
}

// One dump `make crosscheck` writes: the file TASK-STEM.safetensors from `lava crosscheck-dump --task TASK OPTIONS`.
// "{attn}" in both makes one run per variant tools/torch_reference.py implements for the task
// (AttnVariantInfo::crosscheck), "{sparse}" one per such variant with a sparse p or q (AttnVariantInfo::sparse).
struct CrosscheckRun {
  const char* stem;
  const char* options;
};

// The task's model in tools/torch_reference.py; a task without one has no dump.
struct TaskCrosscheck {
  // Writes the dump of one small model of the task to `out` (cli/crosscheck_dump.hpp); returns the exit code.
  int (*dump)(const CommandLine& parsed, const crosscheck::CrosscheckOptions& o, const std::string& out) = nullptr;
  std::vector<CrosscheckRun> runs;
  // The options of crosscheck-dump's model, data and objective (kDumpModelOptions in cli/cmd_crosscheck.cpp) that
  // the dump reads, space-separated; given one of the others, crosscheck-dump refuses it.
  const char* options = "";
};

struct TaskCommands {
  const char* name;
  // The task's `lava train` command line, its options declared (--task is added by the registry), not yet parsed.
  std::unique_ptr<CommandLine> (*train_command_line)();
  int (*train)(const CommandLine& parsed);  // trains; returns the exit code
  std::unique_ptr<CommandLine> (*eval_command_line)();
  int (*eval)(const CommandLine& parsed);
  // The examples a parsed `lava eval` line covers before --limit, counted by the task's own reader of the split
  // (what `lava sweep plan --estimate` scales an evaluation's timing by: cli/eval_examples.hpp). nullptr: the
  // estimate refuses the task's evaluations.
  int64_t (*eval_examples)(const CommandLine& parsed) = nullptr;
  TaskCrosscheck crosscheck = {};
};

class TaskRegistry {
 public:
  // The first task is the default of --task. An empty or repeated name is a std::invalid_argument.
  explicit TaskRegistry(std::vector<TaskCommands> tasks);
  // UsageError "unknown task 'x' (nmt, vqa, ...)" for a name not registered.
  const TaskCommands& find(const std::string& name) const;
  const TaskCommands& default_task() const { return tasks_.front(); }
  std::vector<std::string> names() const;
  std::string names(std::string_view separator) const;  // "nmt, vqa, ..." with separator ", "
  // The tasks with a model in tools/torch_reference.py (TaskCrosscheck::dump), in registry order.
  std::vector<std::string> crosschecked() const;

 private:
  std::vector<TaskCommands> tasks_;
};

const TaskRegistry& task_registry();

enum class TaskVerb { train, eval };
// The task's command line for `verb` with --task added (its help lists every task), options declared, not parsed.
std::unique_ptr<CommandLine> task_command_line(const TaskRegistry& tasks, const TaskCommands& t, TaskVerb verb);
// `lava train` / `lava eval`: the task --task names (the default task without it) parses and runs the whole line.
int run_task_command(const TaskRegistry& tasks, TaskVerb verb, int argc, char** argv);
// The long option names (without "--") `lava train --task TASK` accepts; UsageError for an unknown task.
std::set<std::string> train_option_names(const TaskRegistry& tasks, const std::string& task);
// The same for `lava eval --task TASK`.
std::set<std::string> eval_option_names(const TaskRegistry& tasks, const std::string& task);

}  // namespace lava
