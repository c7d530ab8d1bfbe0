#pragma once
// A sweep file: ini like `lava train --config`, plus grid lines and seeds.
//
//   # soft vs exact vs variational attention, two learning rates, three seeds: 3 x 2 x 3 = 18 runs
//   task = nmt                      # optional, nmt by default (any task of lava train --task)
//   data = synth                    # any `lava train` option: the same in every run
//   epochs = 4
//   grid.attn = soft, marginal
//   grid.lr = 1e-3, 3e-3
//   seeds = 1-3                     # 1-3, 1,2,5 or 1-3,7; 1 by default
//   out = runs/attn                 # where the runs go; FILE's name minus .ini, plus .runs, by default
//
// Relative paths (out, and the runs' own options such as data) are relative to the sweep file's directory: the
// runs train there. A '#' starts a comment anywhere on a line, ';' at its start. Every problem is an InputError
// "FILE:LINE: what": a line that is not key = value, an unknown option, an option the sweep sets itself (save,
// resume, seed, ...), a duplicate key (also `grid.K` beside a fixed K), an empty grid or an empty or repeated value
// in one, a grid over an option results do not depend on (threads), and bad seeds. A leading UTF-8 byte-order mark
// is skipped.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace lava {

struct SweepOption {
  std::string key, value;
  long line = 0;
};

struct SweepGrid {
  std::string key;
  std::vector<std::string> values;
  long line = 0;
};

struct SweepFile {
  std::string path;  // absolute
  std::string dir;   // absolute directory of the file: the runs' working directory
  std::string task = "nmt";
  std::vector<SweepOption> fixed;  // in file order, without task, seeds and out
  std::vector<SweepGrid> grid;     // in file order
  std::vector<int64_t> seeds{1};
  std::string out;  // absolute runs directory
};

// The option names `lava train --task TASK` accepts (without "--"); a UsageError naming the tasks if TASK is none.
using TrainOptionNames = std::function<std::set<std::string>(const std::string& task)>;

// Parses `text` as the sweep file `path` (the path names it in errors and anchors relative paths).
SweepFile parse_sweep_file(const std::string& path, const std::string& text, const TrainOptionNames& options);
// Reads and parses the file at `path`.
SweepFile read_sweep_file(const std::string& path, const TrainOptionNames& options);

// False for the options that change how fast a run trains but not its results (threads, logits-cache-mb): they are
// no part of a run's id or of what its config.ini must repeat, and cannot be grid keys.
bool option_changes_results(const std::string& key);

// "1-3,7" -> {1, 2, 3, 7}; throws std::invalid_argument with the reason (the caller adds file and line).
std::vector<int64_t> parse_seed_list(const std::string& text);

}  // namespace lava
