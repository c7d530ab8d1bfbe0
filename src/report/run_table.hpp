#pragma once
// `lava report`: the runs of one or more sweeps merged into one table, one row per point of the grid.
//
// Runs group by their grid values (and by sweep file, when the runs come from several). A row gives, for each
// chosen figure, mean ± standard deviation over the group's finished runs, sd = sqrt(sum (x - mean)^2 / (n - 1))
// (blank for one run). A figure named M is the run's summary key M, or else valid_M (lava train's done line, with
// the best epoch's line beneath it: ppl -> valid_ppl, kl -> valid_kl); a figure EVAL:KEY is the number KEY of the
// result row of the run's evaluation RUN/eval/EVAL.jsonl (test:aer_prior). Every run that did not finish (failed,
// stopped, still running or killed, not started, or stopped on a NaN) gets a row of its own under its group with
// its state and its log's path: nothing is dropped silently.
#include <string>
#include <vector>

#include "report/run_record.hpp"
#include "report/table.hpp"

namespace lava {

struct RunTableOptions {
  std::vector<std::string> metrics;
  int digits = 4;  // significant digits of the human table (json and csv carry every digit)
};

// human: the markdown rendering's table, "mean ± sd" text cells; otherwise numbers, with M and M_sd columns.
Table run_table(const std::vector<RunRecord>& runs, const RunTableOptions& o, bool human);

// "1-3,7" for {1, 2, 3, 7}.
std::string seed_ranges(std::vector<int64_t> seeds);

}  // namespace lava
