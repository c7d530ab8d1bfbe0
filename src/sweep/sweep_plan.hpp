#pragma once
// A sweep file expanded into runs: the product of its grids (first grid outermost) times its seeds (innermost).
//
// A run's id is FNV-1a 64 of its options as "key=value\n" lines sorted by key, in 16 hex digits: the same options
// give the same id in any order, on any machine, and the run keeps its directory OUT/ID when grids are added or
// reordered. Options that do not change results (threads, logits-cache-mb) are left out of the id.
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
};

std::vector<SweepRun> expand_sweep(const SweepFile& f);

// FNV-1a 64 of the sorted "key=value\n" lines, as 16 lowercase hex digits.
std::string run_id(const std::vector<std::pair<std::string, std::string>>& options);

// The run's config.ini: "key = value" lines, in the run's option order.
std::string run_config_text(const SweepRun& r);
// The run's run.json (report/run_record.hpp): id, index, sweep file, task, seed, grid.
std::string run_info_json(const SweepFile& f, const SweepRun& r);

// The run whose id is `id`; throws InputError naming the sweep file when there is none.
const SweepRun& find_run(const SweepFile& f, const std::vector<SweepRun>& runs, const std::string& id);

}  // namespace lava
