#pragma once
// Result tables in three renderings, chosen by --format:
//   table: aligned columns with a header rule, numbers at each column's display precision (for humans)
//   json : one JSON object per row per line, numbers at full round-trip precision (for scripts)
//   csv  : header line, then rows; RFC 4180 quoting; numbers at full round-trip precision
#include <cstdio>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace lava {

enum class OutputFormat { table, json, csv };

// "table" | "json" | "csv"; anything else throws UsageError naming --format.
OutputFormat parse_output_format(std::string_view s);
std::string_view to_string(OutputFormat f);

// One table cell: text, or a number (NaN prints as "nan" in table/csv and null in json). Numbers are doubles, shown
// at their column's precision; Cell::integer keeps a whole number exact in every format (a seed past 2^53 would not
// survive a double) and prints it with all its digits.
struct Cell {
  std::variant<std::string, double, int64_t> value;
  Cell(std::string s) : value(std::move(s)) {}
  Cell(const char* s) : value(std::string(s)) {}
  Cell(double x) : value(x) {}
  template <class T>
    requires std::is_arithmetic_v<T> && (!std::is_same_v<T, bool>)
  Cell(T x) : value(static_cast<double>(x)) {}
  static Cell integer(int64_t x) {
    Cell c(0.0);
    c.value = x;
    return c;
  }
  bool is_number() const { return !std::holds_alternative<std::string>(value); }
};

class Table {
 public:
  // `precision` is a printf/fmt-style spec for the human table, e.g. ".4f", "%.2e" or "" (shortest).
  Table& add_column(std::string name, std::string precision = "");
  void add_row(std::vector<Cell> cells);  // one cell per column (LAVA_CHECK)

  size_t rows() const { return rows_.size(); }
  std::string render(OutputFormat format) const;
  // GitHub-flavoured markdown: | a | b |, a |---| rule (---: for all-number columns), '|' in cells escaped;
  // numbers at each column's display precision, as in the human table.
  std::string render_markdown() const;
  void print(std::FILE* out, OutputFormat format) const;

 private:
  struct Column {
    std::string name;
    std::string spec;  // fmt replacement field, e.g. "{:.4f}"
  };
  std::string render_table() const;
  std::string cell_text(size_t row, size_t col) const;  // a cell as the human table prints it
  std::string render_json() const;
  std::string render_csv() const;
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace lava
