#pragma once
// The evaluations of a sweep's run ([eval NAME] sections), which `lava sweep exec` runs after training:
//   - each is `lava eval --task T --config RUN/eval/NAME.ini --model RUN/model.safetensors --data DATA --format json
//     --quiet`, in this process, from the sweep file's directory; DATA is the run's own unless the section sets data;
//   - its JSON lines go to RUN/eval/NAME.jsonl.tmp, renamed to RUN/eval/NAME.jsonl when lava eval succeeds, so an
//     existing NAME.jsonl is a complete evaluation: it is skipped, and one that was stopped (the job killed, a
//     scheduler's signal: lava eval then ends at once) runs again from its start in the next session;
//   - its stderr is appended to RUN/eval/NAME.log.
// Evaluations are no part of a run's id: adding one to a sweep file adds it to the runs already trained.
#include <functional>
#include <string>
#include <vector>

#include "sweep/redirected_command.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

namespace lava {

// RUN/eval/NAME.jsonl.
std::string eval_result_path(const SweepRun& r, const std::string& name);
// The evaluations of `r` without their NAME.jsonl, in the file's order.
std::vector<std::string> missing_evals(const SweepRun& r);
// RUN/eval/NAME.ini: the section's options as key = value lines.
std::string eval_config_text(const SweepEval& e);
// The lava eval arguments (argv[0] "eval") of evaluation `e` of run `r`; threads > 0 adds --threads.
std::vector<std::string> eval_arguments(const SweepFile& f, const SweepRun& r, const SweepEval& e, int threads);
// The same with the config file and the model elsewhere (`lava sweep plan --estimate` times an evaluation on a model
// of its own).
std::vector<std::string> eval_arguments(const SweepFile& f, const SweepRun& r, const SweepEval& e, int threads,
                                        const std::string& config, const std::string& model);

// Runs the missing evaluations of `r` in order (every one, also after one failed) and returns 0, or the first
// failure's exit code. `note` gets one line per evaluation (started, done, failed).
int run_missing_evals(const SweepFile& f, const SweepRun& r, int threads, const CommandEntry& eval,
                      const std::function<void(const std::string&)>& note);

}  // namespace lava
