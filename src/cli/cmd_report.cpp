// lava report DIR...: the runs of sweeps (report/run_record.hpp) merged into one table, grouped by their grid
// values, with mean ± sd over seeds of the chosen figures (report/run_table.hpp); with --tables paper, the paper's
// Tables 1, 2 and 3 and their pictures (report/paper_tables.hpp).
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/paper_rows.hpp"
#include "cli/positional_args.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "report/paper_tables.hpp"
#include "report/run_table.hpp"

namespace lava {

namespace {

int report_paper_tables(const std::vector<std::string>& dirs, OutputFormat format, const std::string& plots) {
  const std::vector<PaperRun> runs = read_paper_runs(find_run_dirs(dirs));
  std::vector<RunRecord> records;
  for (const PaperRun& r : runs) records.push_back(r.record);
  refuse_duplicate_runs(records);
  const PaperRows paper = paper_rows_of_variants();
  const ReportDocument doc = paper_tables(runs, paper);
  const std::string out = format == OutputFormat::json ? doc.json_lines() : doc.markdown();
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!plots.empty())
    for (const std::string& f : write_paper_plots(plots, group_paper_runs(runs, paper)))
      std::fprintf(stderr, "lava report: wrote %s\n", f.c_str());
  return 0;
}

}  // namespace

int cmd_report(int argc, char** argv) {
  CommandLine cl("report",
                 "lava report DIR... [--metrics ppl,kl_gap] [--format table|json|csv]\n"
                 "       lava report DIR... --tables paper [--plots DIR] [--format table|json]",
                 "Reads the runs at any depth under each DIR (a folder of sweeps, a sweep's runs directory, or one\n"
                 "run's directory): their run.json, status.json, metrics.jsonl and eval/*.jsonl. Runs group by\n"
                 "their grid values (and their sweep file, when there are several); each row gives mean ± sd over\n"
                 "the group's finished seeds of every figure in --metrics. A figure M is the done line's key M, or\n"
                 "else valid_M (lava train's done line, with the best epoch's line beneath it): ppl, elbo, kl,\n"
                 "kl_gap, nll, accuracy, entropy, ...; a figure EVAL:KEY is the number KEY of the result row of the run's\n"
                 "evaluation RUN/eval/EVAL.jsonl (an [eval EVAL] section of its sweep file), e.g. test:bleu or\n"
                 "test:aer_posterior; sd divides by n - 1. A run that did not finish gets its own row with its\n"
                 "state (failed, stopped, running or killed, not started) and its log's path. A run with a file that\n"
                 "cannot be read is a row saying \"unreadable: FILE:LINE: what\", the same line goes to stderr, and\n"
                 "the exit code is 1. A run reached twice (DIR given twice, DIR and DIR/RUN) counts once; two copies\n"
                 "of one run are refused.\n\n"
                 "--format table prints a markdown table; json prints one object per row and csv a header and rows,\n"
                 "both with M (the mean), M_sd and n columns at full precision.\n\n"
                 "--tables paper prints the paper's Tables 1, 2 and 3 instead (translation Table 1 with where and\n"
                 "why each run stopped, Table 2: exact against K-max, Table 3: inference alternatives and prior\n"
                 "entropy, VQA's Table 1 per question mix, the compute the runs took), the paper's figure beside\n"
                 "each and mean ± sd over seeds, from each run's config.ini (its attn, data, ...), metrics.jsonl and\n"
                 "its evaluations RUN/eval/*.jsonl (lava eval --format json; told apart by their split, kmax and\n"
                 "bleu, not their names). Markdown, or with --format json one JSON line per table row. Any file\n"
                 "that cannot be read is an error naming FILE:LINE. --plots DIR also writes the learning curves\n"
                 "(nmt-curves.svg, vqa-curves-MIX.svg) and test PPL against K (kmax.svg) into DIR.");
  cl.options().add_options()                                                                                 //
      ("metrics", po::value<std::string>()->default_value("ppl,kl_gap"), "comma-separated figures to report")  //
      ("digits", po::value<std::string>()->default_value("4"), "significant digits in the markdown table")  //
      ("tables", po::value<std::string>(), "paper: the paper's Tables 1, 2 and 3 from the runs")             //
      ("plots", po::value<std::string>(), "with --tables paper: write the tables' pictures into this folder");
  SplitArgs a = split_positional(argc, argv);
  std::vector<char*> v = argv_of(a.options);
  if (!cl.parse(int(a.options.size()), v.data())) return 0;
  if (a.positional.empty()) cl.fail("needs at least one runs DIR");
  if (cl.has("tables")) {
    if (cl.get_string("tables") != "paper") cl.fail("--tables: the one table set is 'paper', not '" + cl.get_string("tables") + "'");
    if (cl.common().format == OutputFormat::csv) cl.fail("--tables paper prints markdown (--format table) or json");
    return report_paper_tables(a.positional, cl.common().format, cl.has("plots") ? cl.get_string("plots") : "");
  }
  if (cl.has("plots")) cl.fail("--plots goes with --tables paper");
  RunTableOptions o;
  o.digits = int(cl.get_int("digits", 1, 17));
  const std::string metrics = cl.get_string("metrics");
  for (size_t start = 0; start <= metrics.size();) {
    size_t comma = metrics.find(',', start);
    if (comma == std::string::npos) comma = metrics.size();
    const std::string m = metrics.substr(start, comma - start);
    if (m.empty() || m.find_first_of(" \t") != std::string::npos) cl.fail("--metrics: '" + metrics + "' has an empty or spaced name");
    o.metrics.push_back(m);
    start = comma + 1;
  }
  std::vector<RunRecord> runs;
  for (const std::string& dir : find_run_dirs(a.positional)) runs.push_back(read_run_record(dir));
  refuse_duplicate_runs(runs);
  const OutputFormat format = cl.common().format;
  const Table t = run_table(runs, o, format == OutputFormat::table);
  if (format == OutputFormat::table) {
    const std::string md = t.render_markdown();
    std::fwrite(md.data(), 1, md.size(), stdout);
  } else {
    t.print(stdout, format);
  }
  size_t unfinished = 0, unreadable = 0;
  for (const RunRecord& r : runs) {
    unreadable += !r.unreadable.empty();
    unfinished += r.unreadable.empty() && (r.status.state != RunState::finished || !r.summary || r.nan);
  }
  if (unfinished)
    std::fprintf(stderr, "lava report: %zu of %zu runs did not finish (their rows say why)\n", unfinished, runs.size());
  // The table has every other run; each unreadable file is still an error, one line each, and the exit code says so.
  for (const RunRecord& r : runs)
    if (!r.unreadable.empty()) std::fprintf(stderr, "lava report: %s\n", one_line(r.unreadable).c_str());
  return unreadable ? 1 : 0;
}

}  // namespace lava
