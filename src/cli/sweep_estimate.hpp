#pragma once
// `lava sweep plan|slurm --estimate`: the options, and a sweep run's training budget (epochs, max-steps, patience, ...) read the way `lava train --task T` reads it, its
// defaults included: what `lava sweep plan --estimate` needs to know how long a run trains.
#include <optional>

#include "cli/command_line.hpp"
#include "sweep/run_estimate.hpp"

namespace lava {

// Parses the run's options with its task's own `lava train` command line. UsageError or InputError as lava train
// would give for the same options.
RunBudget run_budget(const SweepFile& f, const SweepRun& r);

// --estimate, --estimate-steps, --estimate-examples, --expected-epochs (and their help).
void add_estimate_options(CommandLine& cl);
// The estimate when --estimate was given (timing runs at one thread, progress on stderr), else nothing.
std::optional<SweepEstimate> estimate_if_asked(const CommandLine& cl, const SweepFile& f,
                                               const std::vector<SweepRun>& runs);
// One row per run (index, id, seed, grid, shape, updates, what they rest on, validations, CPU seconds of an update,
// warm-start updates and theirs when a run has a warm start, of a validation, the training's core-hours
// (core_hours), its evaluations: how many, the model they were timed on ("trained": a run's own, "timing": the
// timing run's), their core-hours, and training and evaluations together), then a row "total" with the number of
// shapes in the shape column and the table's sums in the three core-hour columns.
Table estimate_table(const SweepFile& f, const std::vector<SweepRun>& runs, const SweepEstimate& est);

}  // namespace lava
