#include "report/table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/json.hpp"

namespace lava {

OutputFormat parse_output_format(std::string_view s) {
  if (s == "table") return OutputFormat::table;
  if (s == "json") return OutputFormat::json;
  if (s == "csv") return OutputFormat::csv;
  throw UsageError(fmt::format("--format must be table, json or csv (got \"{}\")", s));
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
        text[r][c] = fmt::format(fmt::runtime(columns_[c].spec), *x);
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
         [&](size_t c) { return std::holds_alternative<double>(rows_[r][c].value); });
  return out;
}

std::string Table::render_json() const {
  std::string out;
  for (const auto& row : rows_) {
    JsonLine j;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (const double* x = std::get_if<double>(&row[c].value)) j.add(columns_[c].name, *x);
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
