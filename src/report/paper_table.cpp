#include "report/paper_table.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

namespace lava {

namespace {

std::string printf_double(const char* format, double x) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// "-0.000" -> "0.000": a sign on a figure that prints as zero says nothing.
std::string drop_negative_zero(std::string s) {
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("0.", 1) == std::string::npos) s.erase(0, 1);
  return s;
}

JsonValue json_number(double x) { return std::isnan(x) ? JsonValue() : JsonValue(x); }

}  // namespace

std::string format_figure(double x, const char* format) {
  if (std::isnan(x)) return "–";
  if (std::fabs(x) >= 1e7) return drop_negative_zero(printf_double("%.3g", x));
  return drop_negative_zero(printf_double(format, x));
}

std::string format_run_time(double seconds) {
  if (std::isnan(seconds)) return "–";
  // Past a million hours (or below zero) the figure is no duration a run took: printed as the number it is.
  if (!(seconds >= 0 && seconds < 3.6e9)) return format_figure(seconds, "%.0f") + "s";
  const long s = long(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

double SeedStat::mean() const {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values) sum += v;
  return sum / double(values.size());
}

double SeedStat::sd() const {
  if (values.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double m = mean();
  double ss = 0;
  for (double v : values) ss += (v - m) * (v - m);
  return std::sqrt(ss / double(values.size() - 1));
}

SeedStat seed_stat(const std::vector<double>& values) {
  SeedStat s;
  for (double v : values)
    if (!std::isnan(v)) s.values.push_back(v);
  return s;
}

ReportCell stat_cell(const std::string& key, const SeedStat& s, const char* format) {
  ReportCell c;
  if (s.n() == 0) {
    c.text = "–";
  } else {
    c.text = drop_negative_zero(printf_double(format, s.mean()));
    if (s.n() > 1) c.text += " ± " + printf_double(format, s.sd());
  }
  c.json = {{key, json_number(s.mean())}, {key + "_sd", json_number(s.sd())}, {key + "_n", JsonValue(int64_t(s.n()))}};
  return c;
}

ReportCell train_time_cell(const SeedStat& s) {
  const double mean = s.mean();
  return ReportCell{format_run_time(std::nearbyint(mean)), {{"train_seconds", json_number(mean)}}};
}

ReportCell text_cell(const std::string& key, const std::string& text) {
  ReportCell c{escape_pipes(text), {}};
  if (!key.empty()) c.json.emplace_back(key, JsonValue(text));
  return c;
}

ReportCell number_cell(const std::string& key, double x, const char* format) {
  return ReportCell{format_figure(x, format), {{key, json_number(x)}}};
}

ReportCell paper_cell(const std::string& key, double x) {
  return ReportCell{format_figure(x, "%.2f"), {{"paper_" + key, json_number(x)}}};
}

std::string escape_pipes(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string ReportTable::markdown() const {
  std::string out = "|";
  for (const std::string& h : headers) out += " " + h + " |";
  out += "\n|";
  for (bool n : numeric) out += n ? "--:|" : "---|";
  out += "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const ReportCell& c : row) out += c.text.empty() ? " |" : " " + c.text + " |";
    out += "\n";
  }
  return out;
}

std::string ReportDocument::markdown() const {
  std::string out;
  for (const auto& b : blocks) {
    if (!out.empty()) out += "\n";
    if (const std::string* s = std::get_if<std::string>(&b)) {
      out += *s;
      if (out.empty() || out.back() != '\n') out += "\n";
    } else {
      out += std::get<ReportTable>(b).markdown();
    }
  }
  return out;
}

std::string ReportDocument::json_lines() const {
  std::string out;
  for (const auto& b : blocks) {
    const ReportTable* t = std::get_if<ReportTable>(&b);
    if (!t) continue;
    for (const auto& row : t->rows) {
      JsonValue j = JsonValue::object();
      j.set("table", JsonValue(t->name));
      for (const ReportCell& c : row)
        for (const auto& [k, v] : c.json) j.set(k, v);
      out += to_json(j) + "\n";
    }
  }
  return out;
}

}  // namespace lava
