#pragma once
// The document `lava report --tables paper` prints: prose and tables in order, rendered as markdown, or as JSON
// lines with one object per table row ({"table": NAME, key: value, ...}). A cell carries both renderings: its
// markdown text and its JSON members (a mean over seeds gives KEY, KEY_sd and KEY_n; a paper figure paper_KEY).
//
// Numbers print as the experiment scripts printed them (printf formats), so that the tables read the same:
// mean ± sd with sd the sample standard deviation sqrt(Σ (x − mean)² / (n − 1)), the mean alone for one value, "–"
// for none, and a mean that rounds to zero without a sign (a KL of −1e−17 at q = p prints 0.000, not -0.000).
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/json.hpp"

namespace lava {

struct ReportCell {
  std::string text;                                      // markdown ('|' already escaped where it is literal)
  std::vector<std::pair<std::string, JsonValue>> json;  // the row's JSON members this cell contributes
};

struct ReportTable {
  std::string name;  // the JSON lines' "table"
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // right-aligned column (---:)
  std::vector<std::vector<ReportCell>> rows;
  void add_column(std::string header, bool is_numeric) {
    headers.push_back(std::move(header));
    numeric.push_back(is_numeric);
  }
  std::string markdown() const;
};

// Prose (a markdown paragraph or heading, printed as given) and tables, in order.
struct ReportDocument {
  std::vector<std::variant<std::string, ReportTable>> blocks;
  void text(std::string_view s) { blocks.emplace_back(std::in_place_type<std::string>, s); }
  void table(ReportTable t) { blocks.emplace_back(std::move(t)); }
  // Blocks separated by one blank line.
  std::string markdown() const;
  // One line per row of every table.
  std::string json_lines() const;
};

// printf(format, x), without the sign of a value that prints as zero; "–" for NaN. |x| ≥ 1e7 prints in %.3g (a
// diverged bound's PPL of 1e221 in %.2f would be 224 digits).
std::string format_figure(double x, const char* format);
// "42s", "3m05s" or "2h07m" (seconds rounded to the nearest whole); "–" for NaN.
std::string format_run_time(double seconds);

// Mean and sample sd, two passes in the values' order (the same values give the same bits). NaN values are left out.
struct SeedStat {
  std::vector<double> values;
  size_t n() const { return values.size(); }
  double mean() const;
  double sd() const;  // NaN for fewer than 2 values
};
SeedStat seed_stat(const std::vector<double>& values);

// The mean over seeds of run times, rounded to whole seconds as printf's %.0f rounds (half to even), then printed by
// format_run_time: the experiment scripts' two steps, so that a time reads the same to the second. JSON member
// train_seconds, the exact mean.
ReportCell train_time_cell(const SeedStat& s);

// "mean ± sd" in `format` (the mean alone for one value, "–" for none) with JSON members key, key_sd, key_n.
ReportCell stat_cell(const std::string& key, const SeedStat& s, const char* format);
// A text cell with the JSON member key: "text" (no member for an empty key); its '|' are escaped in markdown.
ReportCell text_cell(const std::string& key, const std::string& text);
// A number in `format` ("–" and null for NaN).
ReportCell number_cell(const std::string& key, double x, const char* format);
// The paper's figure, as the paper prints it (two decimals), JSON member paper_KEY.
ReportCell paper_cell(const std::string& key, double x);

// Markdown's literal '|' inside a cell.
std::string escape_pipes(const std::string& s);

}  // namespace lava
