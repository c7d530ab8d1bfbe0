#pragma once
// `lava report --tables paper`: the paper's Tables 1, 2 and 3 from run folders (report/paper_runs.hpp), laid out as
// experiments/results/paper-tables/tables.md has them, with the paper's figure beside each (the paper's rows the
// variants declare, report/paper_figures.hpp) and mean ± sd over the seeds of each row (report/paper_table.hpp).
//
// Translation runs (task nmt) make one table set; VQA runs (task vqa) group by their data set, one question mix each.
// A row is an --attn variant: the paper's rows in the paper's order, then any other variant by name. Within a row,
// every run of that variant counts, one per seed (two runs of one variant and seed in one group are refused).
#include <string>
#include <vector>

#include "report/paper_figures.hpp"
#include "report/paper_runs.hpp"
#include "report/paper_table.hpp"

namespace lava {

// The runs of one table: translation, or one VQA question mix.
struct RunGroup {
  std::string label;  // "nmt", or the VQA mix's name
  std::string data;   // the runs' data option as config.ini writes it
  std::vector<const PaperRun*> runs;
  const PaperRows* paper = nullptr;                                 // the paper's rows, set by group_paper_runs
  std::vector<std::string> variants() const;                        // rows, in the report's order
  std::vector<const PaperRun*> runs_of(const std::string& attn) const;  // by seed
};

// The translation group (empty label when there are no translation runs) and the VQA mixes (sorted by label), each
// reading `paper`, which must outlive them.
struct PaperGroups {
  RunGroup nmt;
  std::vector<RunGroup> vqa;
};
PaperGroups group_paper_runs(const std::vector<PaperRun>& runs, const PaperRows& paper);

// Table 1 (translation) with the table of where and why each run stopped, Table 2 and Table 3 (Table 3's prior
// entropy also reads the VQA mixes).
void add_translation_tables(ReportDocument& doc, const PaperGroups& g);
// VQA's Table 1 per mix: all questions, the single-region questions and every question type.
void add_vqa_tables(ReportDocument& doc, const PaperGroups& g);
// The compute every task's runs took.
void add_compute_table(ReportDocument& doc, const std::vector<PaperRun>& runs);

// Every table, in the order of tables.md.
ReportDocument paper_tables(const std::vector<PaperRun>& runs, const PaperRows& paper);

// The learning curves (nmt-curves.svg, vqa-curves-MIX.svg) and test PPL against K-max's K (kmax.svg) into `dir`,
// from the first seed of every row; returns the files written. A picture with no points is not written.
std::vector<std::string> write_paper_plots(const std::string& dir, const PaperGroups& g);

}  // namespace lava
