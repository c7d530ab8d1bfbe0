#pragma once
// A sweep file: ini like `lava train --config`, plus grid lines and seeds, and optionally sections for scales,
// per-row overrides and evaluations.
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
// runs train there. A '#' starts a comment anywhere on a line, ';' at its start. A leading UTF-8 byte-order mark
// is skipped.
//
// Sections follow the lines above; each holds key = value lines up to the next section:
//
//   scale = small                   # (before any section) the scale used without --scale
//   [scale medium]                  # chosen with --scale medium: train options, grid.K, seeds and out replace
//   hidden-size = 256               #   or add to those above (a changed option is a different run, id and all)
//   out = runs/medium
//   [attn var-dirichlet]            # runs whose grid value of attn is var-dirichlet: train options and seeds,
//   warm-start = 2122               #   which win over the scale's and the lines above (two such sections of one
//                                   #   row, [attn X] and [lr Y], may not set the same key)
//   seeds = 1
//   [scale medium, attn var-dirichlet]   # the same, at one scale only; its keys win over [attn var-dirichlet]'s
//   warm-start = 4000
//   [eval test-bleu]                # after training, lava eval with these options (--task, --model, --data
//   split = test                    #   (unless set here) and --format json come from the run); flags are
//   bleu = true                     #   key = true. only.K = a, b limits it to the runs whose grid K is a or b
//   only.attn = marginal, var-enum
//   [scale paper, eval test-bleu]   # an evaluation at one scale only, or one scale's changes to it
//
// grid.label names rows that are no one option's values: `grid.label = soft, var-enum+warm` with [label
// var-enum+warm] setting attn = var-enum and warm-start = 1500. A label is no lava train option: it is in each run's
// run.json (lava report's rows) but not in its options or id, so two labels whose rows train with the same options
// are an error.
//
// A file with [scale ...] sections always runs at one scale: --scale NAME, else `scale = NAME`, else it is an
// error. An evaluation writes RUN/eval/NAME.jsonl (lava eval's JSON lines, renamed into place when it succeeds:
// an existing file means done) and RUN/eval/NAME.log; evaluations are no part of a run's id. Every problem is an
// InputError "FILE:LINE: what": a line that is not key = value, an unknown option (of lava train, or of lava eval
// in an [eval] section), an option the sweep sets itself (save, resume, seed, model, ...), a duplicate key in one
// section (also `grid.K` beside a fixed K), a repeated or unknown section, a section for a grid value no grid
// lists, an unknown scale, an empty grid or an empty or repeated value in one, a grid over an option results do
// not depend on (threads), and bad seeds.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lava {

// The grid key whose values name rows instead of giving an option its values.
inline constexpr const char* kSweepLabelKey = "label";

struct SweepOption {
  std::string key, value;
  long line = 0;
};

struct SweepGrid {
  std::string key;
  std::vector<std::string> values;
  long line = 0;
};

// [KEY VALUE] (and [scale S, KEY VALUE] at the chosen scale, merged into it): options and seeds of the runs whose
// grid value of KEY is VALUE.
struct SweepOverride {
  std::string key, value;
  std::vector<SweepOption> options;
  std::optional<std::vector<int64_t>> seeds;
  long line = 0;        // the section's header
  long seeds_line = 0;  // where seeds was set
};

// [eval NAME] (and [scale S, eval NAME] at the chosen scale, merged into it): one evaluation after training.
struct SweepEval {
  std::string name;                  // [A-Za-z0-9_.-], not starting with '.': RUN/eval/NAME.jsonl
  std::vector<SweepOption> options;  // lava eval options, in file order
  std::vector<SweepGrid> only;       // only.K = values: the runs whose grid value of K is one of them
  long line = 0;
};

struct SweepFile {
  std::string path;  // absolute
  std::string dir;   // absolute directory of the file: the runs' working directory
  std::string task = "nmt";
  std::string scale;                  // the chosen scale; empty for a file without [scale] sections
  std::vector<std::string> scales;    // every [scale NAME] of the file, in file order
  std::vector<SweepOption> fixed;     // in file order, without task, seeds and out; the scale's changes applied
  std::vector<SweepGrid> grid;        // in file order
  std::vector<int64_t> seeds{1};
  std::string out;  // absolute runs directory
  std::vector<SweepOverride> overrides;  // at the chosen scale, in file order
  std::vector<SweepEval> evals;          // at the chosen scale, in file order
  std::vector<SweepOption> set;          // the command line's --set KEY=VALUE, in order (apply_sweep_settings)
};

// The option names `lava train --task TASK` (or `lava eval --task TASK`) accepts (without "--"); a UsageError
// naming the tasks if TASK is none.
using TrainOptionNames = std::function<std::set<std::string>(const std::string& task)>;
using EvalOptionNames = TrainOptionNames;

// Parses `text` as the sweep file `path` (the path names it in errors and anchors relative paths), at `scale`
// (empty: the file's `scale = NAME`, if any). Without `eval_options`, an [eval] section is an error.
SweepFile parse_sweep_file(const std::string& path, const std::string& text, const TrainOptionNames& options,
                           const std::string& scale = "", const EvalOptionNames& eval_options = {});
// Reads and parses the file at `path`.
SweepFile read_sweep_file(const std::string& path, const TrainOptionNames& options, const std::string& scale = "",
                          const EvalOptionNames& eval_options = {});

// lava sweep's --set KEY=VALUE, each applied over the file at its chosen scale: KEY is a lava train option of the
// file's task, which every run then trains with whatever the file's lines (its scale's and rows' included) say, or
// out. VALUE reads as it would in the file: a relative path is relative to the file's directory. They are kept in
// f.set, so that the commands the sweep writes (sweep exec, the Slurm script) repeat them. A setting that is not
// KEY=VALUE, an unknown option, one the sweep sets itself and a grid key are each a UsageError naming it.
void apply_sweep_settings(SweepFile& f, const std::vector<std::string>& settings, const TrainOptionNames& options);

// False for the options that change how fast a run trains but not its results (threads, logits-cache-mb): they are
// no part of a run's id or of what its config.ini must repeat, and cannot be grid keys.
bool option_changes_results(const std::string& key);

// "1-3,7" -> {1, 2, 3, 7}; throws std::invalid_argument with the reason (the caller adds file and line).
std::vector<int64_t> parse_seed_list(const std::string& text);

// While alive, the process's working directory is the sweep file's, whose relative paths (data = ...) are relative
// to it; the one before comes back when it goes, on an exception too.
class InSweepDir {
 public:
  explicit InSweepDir(const SweepFile& f) : back_(std::filesystem::current_path()) {
    std::filesystem::current_path(f.dir);
  }
  ~InSweepDir() {
    std::error_code ec;
    std::filesystem::current_path(back_, ec);
  }
  InSweepDir(const InSweepDir&) = delete;
  InSweepDir& operator=(const InSweepDir&) = delete;

 private:
  std::filesystem::path back_;
};

}  // namespace lava
