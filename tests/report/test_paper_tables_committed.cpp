// lava report --tables paper on the committed runs (experiments/results/paper-tables/runs): every figure of the
// committed tables.md, cell by cell, and rows that the bash scripts before the sweep files printed from the same
// runs' logs before they became run folders.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/cli_runner.hpp"

namespace {

const char* const kRuns = "experiments/results/paper-tables";

// The rows of every markdown table in `md` (lines starting with '|', rules left out), each split into trimmed cells
// (an escaped "\|" stays inside its cell).
std::vector<std::vector<std::string>> table_rows(const std::string& md) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines_of(md)) {
    if (line.empty() || line[0] != '|' || line.starts_with("|---")) continue;
    std::vector<std::string> cells;
    std::string cell;
    for (size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|' && line[i - 1] != '\\') {
        const size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
        cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

// Rows of the tables the bash scripts (experiments/paper-tables.sh, since removed) wrote from these runs' logs
// (Table 1 soft, the runs table, Tables 2 and 3, prior entropy, VQA's marginal row and `where` rows of both mixes,
// the single-region var-enum row, the compute).
const std::vector<std::string> kScriptRows = {
      "| Soft Attention | log p(y \\| E[z]) | – | `soft` | 16.74 ± 0.13 | 7.17 | 20.56 ± 0.47 | 32.77 | -2.818 ± 0.008 | 0.000 ± 0.000 | 0.0000 ± 0.0000 | 1.28 ± 0.04 | 0.560 ± 0.003 | 12m12s | 12732 ± 1061 |",
      "| `var-enum` | 2 | 9 | 9549 | patience | 7 | 11.37 | 24m08s |",
      "| Variational Attention | Enum | `var-enum` | 13.47 ± 0.24 | 14.59 ± 0.22 | 6.08 / 6.42 | 21.11 ± 0.88 | 21.12 ± 0.82 | 33.68 / 33.69 | 3/3 |",
      "| Variational Attention (RWS) | `var-rws` | 14.58 | 6.41 | 21.61 | 32.96 | 0.626 | 1/1 |",
      "| Soft Attention | `soft` | 1.28 ± 0.04 | 1.24 | 1.52 ± 0.05 | 1.31 ± 0.06 | 2.70 |",
      "| Marginal Likelihood | log E[p] | Enum | 0.680 ± 0.007 | 1.69 | 71.92 ± 0.31 | 60.33 | 4.108 ± 0.421 | 3.4285 ± 0.4174 | 0.96 ± 0.04 | patience ×3 | 15.0 ± 3.0 | 46875 ± 9375 | 12.0 ± 3.0 | 4m56s | 3/3 |",
      "| where | single_region | 2514 | 89.4 ± 1.8 (0.431 ± 0.089) | 92.0 ± 0.1 (0.241 ± 0.005) | 48.8 (1.313) | 38.5 (1.549) | 11.4 ± 0.9 (2.198 ± 0.001) | 12.0 (2.197) |",
      "| where | single_region | 2173 | 89.3 ± 1.2 (0.415 ± 0.068) | 84.6 ± 12.8 (0.395 ± 0.280) | 47.0 (1.336) | 11.6 (2.197) | 11.2 ± 0.4 (2.197 ± 0.000) | 11.7 (2.197) |",
      "| nmt | 15 | 213261 | 7.92 | – | 0 | 0.00 |",  // – : trained before LAVA recorded CPU time
      "| vqa | 24 | 1437500 | 3.15 | – | 0 | 0.00 |",
      "| Variational Attention | 1.131 ± 0.006 | 1.69 | 54.35 ± 0.40 | 58.44 | 1.156 ± 0.007 | 0.0253 ± 0.0025 | 0.665 ± 0.010 |",
};

}  // namespace

TEST_CASE("paper tables: the committed runs print every figure of the committed tables.md") {
  const CliResult r = run_lava(fmt::format("report {} --tables paper", kRuns));
  REQUIRE(r.code == 0);
  const auto printed = table_rows(r.out);
  const auto committed = table_rows(slurp(fmt::format("{}/tables.md", kRuns)));
  REQUIRE(committed.size() > 80);
  REQUIRE(printed.size() == committed.size());
  for (size_t i = 0; i < printed.size(); ++i) {
    INFO("table row " << i << ": " << (committed[i].empty() ? "" : committed[i][0]));
    REQUIRE(printed[i].size() == committed[i].size());
    for (size_t c = 0; c < printed[i].size(); ++c) CHECK(printed[i][c] == committed[i][c]);
  }
  const std::vector<std::string> lines = lines_of(r.out);
  for (const std::string& row : kScriptRows) {
    INFO(row);
    CHECK(std::find(lines.begin(), lines.end(), row) != lines.end());
  }
  // No absolute path of the machine that made them, and no citation of a document outside the repository (the
  // words are split so that a grep of the repository for them finds none).
  const std::string machine_root = std::string("/wo") + "rk/", outside_notes = std::string("paper") + "-notes";
  CHECK(r.out.find(machine_root) == std::string::npos);
  CHECK(r.out.find(outside_notes) == std::string::npos);
}

TEST_CASE("paper tables: the committed tables.jsonl is the report's JSON lines") {
  const CliResult r = run_lava(fmt::format("report {} --tables paper --format json", kRuns));
  REQUIRE(r.code == 0);
  CHECK(r.out == slurp(fmt::format("{}/tables.jsonl", kRuns)));
}
