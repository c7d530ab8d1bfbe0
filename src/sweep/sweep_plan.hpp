#pragma once
// A sweep file expanded into runs: the product of its grids (first grid outermost) times its seeds (innermost),
// each row (one value of every grid) with the options and seeds its [KEY VALUE] sections give it.
//
// A run's id is FNV-1a 64 of its options as "key=value\n" lines sorted by key, in 16 hex digits: the same options
// give the same id in any order, on any machine, and the run keeps its directory OUT/ID when grids are added or
// reordered. Options that do not change results (threads, logits-cache-mb) are left out of the id, and so is a row's
// label (grid.label), which is no option.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sweep/sweep_file.hpp"

namespace lava {

struct SweepRun {
  int64_t index = 0;  // position in the expansion (the Slurm array index)
  std::string id;
  std::string dir;  // OUT/ID, absolute
  int64_t seed = 0;
  std::vector<std::pair<std::string, std::string>> grid;     // grid key -> value, in the file's order
  std::vector<std::pair<std::string, std::string>> options;  // every option of the run, seed last
  std::vector<std::string> evals;  // the names of the evaluations it runs after training (no part of its id)
};

// Planning more runs than this takes an explicit --max-runs: a typo in a grid must not create a million run
// directories before anything trains.
inline constexpr int64_t kDefaultMaxRuns = 10000;

// How many runs the sweep expands into (over its rows, each row's seeds). Throws InputError naming the sweep file,
// its grid sizes and the limit when that is more than max_runs (however large the product: it is never computed
// past it), and when two [KEY VALUE] sections of one row set the same option or both set seeds.
int64_t sweep_run_count(const SweepFile& f, int64_t max_runs);
std::vector<SweepRun> expand_sweep(const SweepFile& f, int64_t max_runs = kDefaultMaxRuns);

// FNV-1a 64 of the sorted "key=value\n" lines, as 16 lowercase hex digits.
std::string run_id(const std::vector<std::pair<std::string, std::string>>& options);

// The run's config.ini: "key = value" lines, in the run's option order.
std::string run_config_text(const SweepRun& r);
// The lines of a config.ini that its run's results depend on, sorted: without threads and the other options that
// only change speed, so that an edit of those is no other run, and in any order, as for the run's id (a sweep
// file's [scale] and [KEY VALUE] sections may put a run's options in another order than an older file did).
std::string run_config_identity(const std::string& config_text);
// The run's run.json (report/run_record.hpp): id, index, sweep file, task, seed, grid.
std::string run_info_json(const SweepFile& f, const SweepRun& r);

// The run whose id is `id`; throws InputError naming the sweep file when there is none.
const SweepRun& find_run(const SweepFile& f, const std::vector<SweepRun>& runs, const std::string& id);

}  // namespace lava
