#pragma once
// The runs a paper table reads: each run folder (report/run_record.hpp) with its options (config.ini), its training
// log (metrics.jsonl) and its evaluations, RUN/eval/NAME.jsonl, one file per `lava eval --format json` of the run's
// model. An evaluation is known by its fields, never by NAME: its result row (the line without "event") says the
// split, kmax (0: exact attention), beam and bleu (when BLEU was computed), and VQA's per-type ("event":"qtype") and
// single-region subset ("event":"subset") lines sit beside it.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.hpp"
#include "report/run_record.hpp"

namespace lava {

struct RunEvaluation {
  std::string file;
  JsonValue result;                // the last line without "event"
  std::vector<JsonValue> qtypes;   // VQA: one per question type, in file order
  std::optional<JsonValue> subset;  // VQA: the single-region subset's line
  // The result's number `key`, NaN when absent or not a number (null).
  double figure(const std::string& key) const;
  bool has(const std::string& key) const;
};

struct PaperRun {
  RunRecord record;
  std::vector<std::pair<std::string, std::string>> config;  // config.ini, in file order
  std::string attn;                                         // config.ini's attn
  std::optional<JsonValue> done;                            // metrics.jsonl's last "done" line
  std::vector<JsonValue> epochs;                            // metrics.jsonl's "epoch" lines, in order
  std::vector<RunEvaluation> evals;                         // eval/*.jsonl, sorted by file name
  const std::string* option(const std::string& key) const;  // config.ini's value, nullptr when absent
  double done_figure(const std::string& key) const;         // the done line's number, NaN when absent
  // The last epoch line the trainer marked "best": true (a better validation bound), nullptr when none.
  const JsonValue* best_epoch_line() const;
  // The done line's stop when training ended for good (patience, epochs, max-steps, nan); empty when the run is
  // not finished (no done line, or one of a signal or --max-minutes, which a rerun resumes).
  std::string finished_stop() const;
  // The test evaluation with exact attention (kmax 0); with_bleu: one that computed BLEU. nullptr when none.
  const RunEvaluation* test_eval(bool with_bleu = false) const;
  // The test evaluation with K-max K (K > 0); with_bleu as above.
  const RunEvaluation* kmax_eval(int64_t k, bool with_bleu = false) const;
};

// Reads every translation and VQA run (the tasks of the paper's tables; runs of other tasks are left out): run.json,
// status.json, config.ini, metrics.jsonl and eval/*.jsonl. Strict, since a table built
// from half a run's files would print wrong figures: any file that cannot be read, a config line that is not
// "key = value", a run without attn, or an evaluation without a result row throws InputError "FILE:LINE: what".
std::vector<PaperRun> read_paper_runs(const std::vector<std::string>& run_dirs);

// "key = value" lines; blank lines and lines starting with '#' or ';' are skipped.
std::vector<std::pair<std::string, std::string>> read_config_lines(const std::string& path);

}  // namespace lava
