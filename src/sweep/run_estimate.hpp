#pragma once
// The cost of a sweep before it runs (`lava sweep plan FILE --estimate`): each distinct model shape trains a few
// updates on this machine, three times in child processes (sweep/timed_train.hpp): n₁ = n/4 and n₂ = n updates
// with the one validation max-steps stops with, and n₂ updates with --valid-every n/4 (m validations). In CPU time,
// which other processes on a loaded machine inflate far less than the wall clock,
//
//   cpu(n, m) = load + n·s + m·v   ⇒   s = (cpu(n₂, 1) − cpu(n₁, 1)) / (n₂ − n₁),  v = (cpu(n₂, m) − cpu(n₂, 1)) / (m − 1)
//
// free of data loading. A run then costs
//
//   core-seconds = updates · s + validations · v
//
// with updates = --max-steps when set, else epochs × batches an epoch (the timing run reports its position in the
// epoch, steps / batches). A run that stops on patience is costed at --expected-epochs when given, else at its
// --epochs budget, an upper bound; the output says which. A marginal warm start (--warm-start W) is a phase of its
// own, timed with the option as it is (its first updates) and with --warm-start 0 (the rest).
//
// The evaluations a run makes after training ([eval NAME] sections, lava eval) are timed per shape the same way,
// on the training timing run's model or a run's own (sweep/eval_estimate.hpp): one example's CPU seconds times the
// examples of the evaluation's split. A run's figure is then training + evaluations, and Slurm's --time rests on it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweep/eval_estimate.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"
#include "sweep/timed_train.hpp"

namespace lava {

// What a run's options say about how long it trains, as `lava train` reads them (its defaults included).
struct RunBudget {
  int epochs = 0;
  int64_t max_steps = 0;    // 0: none
  int patience = 0;         // 0: never stops early
  int64_t valid_every = 0;  // 0: validations at epoch ends only
  int64_t warm_start = 0;   // updates of the marginal warm start (0: none, or the task has none)
};
using RunBudgetOf = std::function<RunBudget(const SweepRun&)>;

// The expected length of a run: updates, validations, and the words that say what the figure rests on.
struct ExpectedLength {
  int64_t updates = 0;
  int64_t validations = 0;
  std::string basis;  // "max-steps", "epochs", "expected-epochs (patience)" or "epochs (patience: upper bound)"
};

// ceil(examples / batch): the updates of one epoch over `examples` training examples.
int64_t updates_per_epoch(int64_t examples, int64_t batch);
// The batches of an epoch from a run that made `steps` updates at epoch position steps / batches (rounded: the
// position is printed to 17 digits). InputError when the position cannot be that of a first epoch.
int64_t batches_from_position(int64_t steps, double position);
// expected_epochs > 0: the hint for runs that stop on patience (never more than their --epochs).
ExpectedLength expected_length(const RunBudget& b, int64_t batches_per_epoch, int expected_epochs);

// The options of `r` that the cost of one update depends on, as "key=value\n" lines: every option but the seed and
// those that change what is learned, not the work of an update (learning rate and its schedule, stopping rules,
// initialisation range, clipping threshold, checkpoints, threads). Runs with the same key share one timing.
std::string cost_shape_key(const SweepRun& r);
// For each run, the index of its shape, numbered in the order shapes first appear.
std::vector<size_t> group_by_shape(const std::vector<SweepRun>& runs);

// Seconds of one update and of one validation, in CPU time, from timing runs of n₁ < n₂ updates with one validation
// each and of n₂ updates with more.
struct StepCost {
  double update_s = 0, validation_s = 0;
  double update_wall_s = 0;  // the loop's wall time an update (above update_s when the machine is loaded)
  int64_t batches_per_epoch = 0;
};
StepCost step_cost(const TrainTiming& short_run, const TrainTiming& long_run, const TrainTiming& validating_run);

struct RunEstimate {
  size_t shape = 0;
  int64_t warm_start = 0;  // the run's --warm-start updates
  ExpectedLength length;
  double core_hours = 0;       // its training
  double eval_core_hours = 0;  // its evaluations
  double total_core_hours() const { return core_hours + eval_core_hours; }
};
struct SweepEstimate {
  std::vector<StepCost> shapes;  // the main phase of each shape
  std::vector<StepCost> warm;    // its warm-start phase (the main phase's figures when it has none)
  std::vector<std::vector<EvalCost>> evals;  // each shape's evaluations (those its runs make), in the file's order
  std::vector<bool> evals_on_trained;        // whether a shape's evaluations were timed on a run's trained model
  std::vector<RunEstimate> runs;
  double core_hours = 0;       // the runs' training
  double eval_core_hours = 0;  // their evaluations
  double total_core_hours() const { return core_hours + eval_core_hours; }
};

// core-seconds of a run from its length and the cost of its phases (warm is used for the first `warm_start`
// updates when the run has a warm start).
double run_core_seconds(const ExpectedLength& length, int64_t warm_start, const StepCost& main, const StepCost& warm);

struct EstimateOptions {
  std::string lava;         // the binary the timing runs use
  int64_t steps = 100;      // n₂ (n₁ = n₂ / 4): an update costs the mean over n₂ − n₁ batches of random lengths
  int expected_epochs = 0;  // hint for runs that stop on patience (0: their --epochs)
  int threads = 1;          // of the timing runs: core-seconds measured at one thread
  // n₂ of an evaluation's timing (n₁ = n₂ / 4): whole batches of lava eval (translation batches 32 sentences), as
  // a few examples in a partly filled batch cost more each than the split's average.
  int64_t eval_examples = 256;
};

// Times every shape and its evaluations (a progress line on stderr for each) and costs every run: its training and
// its evaluations (eval_estimate.hpp). A timing run that fails throws InputError naming the sweep file, the run and
// what lava train or lava eval said.
SweepEstimate estimate_sweep(const SweepFile& f, const std::vector<SweepRun>& runs, const RunBudgetOf& budget_of,
                             const EvalExamplesOf& examples_of, const EstimateOptions& o);

// The longest run's hours, training and evaluations: what `lava sweep slurm --estimate` sets --time from.
double longest_run_hours(const SweepEstimate& est);

// The margin `lava sweep slurm --estimate` puts on the longest run's estimate: a loaded node, a slower CPU than the
// one that timed, and patience stopping later than expected all lengthen a run, and a task past its limit is killed.
inline constexpr double kSlurmTimeFactor = 1.5;
inline constexpr double kSlurmTimeExtraMinutes = 10;

// Slurm's time limit for a task of `hours`: hours × factor + extra_minutes, rounded up to the minute, as
// "HH:MM:SS" or, from a day on, "D-HH:MM:SS".
std::string slurm_time_limit(double hours, double factor, double extra_minutes);

}  // namespace lava
