#include "report/table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/json.hpp"
#include "core/quote_input.hpp"

namespace lava {

OutputFormat parse_output_format(std::string_view s) {
  if (s == "table") return OutputFormat::table;
  if (s == "json") return OutputFormat::json;
  if (s == "csv") return OutputFormat::csv;
  throw UsageError(fmt::format("--format must be table, json or csv (got {})", quote_input(s, '"')));
}

std::string_view to_string(OutputFormat f) {
  switch (f) {
    case OutputFormat::table: return "table";
    case OutputFormat::json: return "json";
    case OutputFormat::csv: return "csv";
  }
  return "?";
}

Table& Table::add_column(std::string name, std::string precision) {
  LAVA_CHECK(rows_.empty(), "add_column after rows were added");
  if (precision.starts_with('%')) precision.erase(0, 1);
  std::string spec = "{:" + precision + "}";
  try {  // a bad spec is a programming error: catch it here, not when the results are printed
    (void)fmt::format(fmt::runtime(spec), 1.5);
  } catch (const fmt::format_error& e) {
    LAVA_CHECK(false, "column \"{}\": bad number format \"{}\": {}", name, precision, e.what());
  }
  columns_.push_back({std::move(name), std::move(spec)});
  return *this;
}

void Table::add_row(std::vector<Cell> cells) {
  LAVA_CHECK(cells.size() == columns_.size(), "row has {} cells, table has {} columns", cells.size(), columns_.size());
  rows_.push_back(std::move(cells));
}

namespace {
// A fixed-point column ("{:.3f}") would print a diverged run's ppl, e^200, as a 90-digit number: from 1e12 up such
// a cell keeps the column's precision in scientific notation (1.523e+90). Below that the spec applies unchanged.
std::string format_cell(const std::string& spec, double x) {
  if (spec.ends_with("f}") && std::isfinite(x) && std::fabs(x) >= 1e12)
    return fmt::format(fmt::runtime(spec.substr(0, spec.size() - 2) + "e}"), x);
  return fmt::format(fmt::runtime(spec), x);
}

// Terminal columns of a UTF-8 string, counted as code points (continuation bytes 10xxxxxx do not count).
size_t display_width(std::string_view s) {
  return size_t(std::count_if(s.begin(), s.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}
}  // namespace

std::string Table::render_table() const {
  // Text cells align left, numbers right; a column whose cells are all numbers gets a right-aligned header.
  const size_t ncol = columns_.size();
  std::vector<std::vector<std::string>> text(rows_.size(), std::vector<std::string>(ncol));
  std::vector<size_t> width(ncol);
  std::vector<bool> numeric(ncol, true);
  for (size_t c = 0; c < ncol; ++c) width[c] = display_width(columns_[c].name);
  for (size_t r = 0; r < rows_.size(); ++r)
    for (size_t c = 0; c < ncol; ++c) {
      if (const double* x = std::get_if<double>(&rows_[r][c].value)) {
        text[r][c] = format_cell(columns_[c].spec, *x);
      } else if (const int64_t* i = std::get_if<int64_t>(&rows_[r][c].value)) {
        text[r][c] = std::to_string(*i);
      } else {
        text[r][c] = std::get<std::string>(rows_[r][c].value);
        numeric[c] = false;
      }
      width[c] = std::max(width[c], display_width(text[r][c]));
    }
  std::string out;
  auto line = [&](auto cell_text, auto right_aligned) {
    std::string s;
    for (size_t c = 0; c < ncol; ++c) {
      if (c) s += "  ";
      const std::string& t = cell_text(c);
      std::string pad(width[c] - display_width(t), ' ');
      s += right_aligned(c) ? pad + t : t + pad;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + '\n';
  };
  line([&](size_t c) -> const std::string& { return columns_[c].name; }, [&](size_t c) { return bool(numeric[c]); });
  size_t total = 0;
  for (size_t c = 0; c < ncol; ++c) total += width[c] + (c ? 2 : 0);
  out += std::string(total, '-') + '\n';
  for (size_t r = 0; r < rows_.size(); ++r)
    line([&](size_t c) -> const std::string& { return text[r][c]; },
         [&](size_t c) { return rows_[r][c].is_number(); });
  return out;
}

std::string Table::cell_text(size_t r, size_t c) const {
  if (const double* x = std::get_if<double>(&rows_[r][c].value)) return fmt::format(fmt::runtime(columns_[c].spec), *x);
  if (const int64_t* i = std::get_if<int64_t>(&rows_[r][c].value)) return std::to_string(*i);
  return std::get<std::string>(rows_[r][c].value);
}

std::string Table::render_markdown() const {
  std::string out = "|";
  auto append_cell = [&out](std::string_view s) {
    out += ' ';
    for (char ch : s) {
      if (ch == '|') out += '\\';
      out += ch;
    }
    out += " |";
  };
  for (const Column& c : columns_) append_cell(c.name);
  out += "\n|";
  for (size_t c = 0; c < columns_.size(); ++c) {
    bool numeric = !rows_.empty();
    for (const auto& row : rows_) numeric = numeric && row[c].is_number();
    out += numeric ? "---:|" : "---|";
  }
  out += '\n';
  for (size_t r = 0; r < rows_.size(); ++r) {
    out += "|";
    for (size_t c = 0; c < columns_.size(); ++c) append_cell(cell_text(r, c));
    out += '\n';
  }
  return out;
}

std::string Table::render_json() const {
  std::string out;
  for (const auto& row : rows_) {
    JsonLine j;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (const double* x = std::get_if<double>(&row[c].value)) j.add(columns_[c].name, *x);
      else if (const int64_t* i = std::get_if<int64_t>(&row[c].value)) j.add(columns_[c].name, *i);
      else j.add(columns_[c].name, std::get<std::string>(row[c].value));
    }
    out += j.str() + '\n';
  }
  return out;
}

namespace {
// RFC 4180: quote a field holding a comma, quote or line break, doubling inner quotes.
void append_csv_field(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return void(out += s);
  out += '"';
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}
}  // namespace

std::string Table::render_csv() const {
  std::string out;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c) out += ',';
    append_csv_field(out, columns_[c].name);
  }
  out += '\n';
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c) out += ',';
      if (const double* x = std::get_if<double>(&row[c].value)) out += fmt::format("{}", *x);  // round-trip digits
      else if (const int64_t* i = std::get_if<int64_t>(&row[c].value)) out += std::to_string(*i);
      else append_csv_field(out, std::get<std::string>(row[c].value));
    }
    out += '\n';
  }
  return out;
}

std::string Table::render(OutputFormat format) const {
  switch (format) {
    case OutputFormat::table: return render_table();
    case OutputFormat::json: return render_json();
    case OutputFormat::csv: return render_csv();
  }
  return {};
}

void Table::print(std::FILE* out, OutputFormat format) const {
  std::string s = render(format);
  std::fwrite(s.data(), 1, s.size(), out);
  std::fflush(out);
}

}  // namespace lava
