// lava plot: curves from JSON-lines files (lava train --format json logs, lava eval rows, a table's table.jsonl)
// as one SVG line plot, one series per file: the learning curves of every row of a table in one picture, or PPL
// against K-max's K.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/positional_args.hpp"
#include "core/check.hpp"
#include "core/json_lines.hpp"
#include "report/svg.hpp"

namespace lava {
namespace {

struct Condition {
  std::string key, value;
};

// "event=epoch,stop=patience" as conditions; a usage error for a term without '=' or with an empty key.
std::vector<Condition> parse_where(const CommandLine& cl, const std::string& spec) {
  std::vector<Condition> out;
  if (spec.empty()) return out;
  for (size_t start = 0; start <= spec.size();) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    const std::string term = spec.substr(start, comma - start);
    const size_t eq = term.find('=');
    if (eq == std::string::npos || eq == 0) cl.fail("--where: '" + term + "' is not KEY=VALUE");
    out.push_back({term.substr(0, eq), term.substr(eq + 1)});
    start = comma + 1;
  }
  return out;
}

// A condition holds when the row has the key and its value, written as JSON would write it without quotes for a
// string, is the condition's text: event=epoch, best=true, kmax=5.
bool holds(const JsonValue& row, const Condition& c) {
  const JsonValue* v = row.find(c.key);
  if (!v) return false;
  if (v->is_string()) return v->str() == c.value;
  return to_json(*v) == c.value;
}

// A row's numeric value of `key`, NaN when absent or not a number (a gap in the line).
double number_of(const JsonValue& row, const std::string& key) {
  const JsonValue* v = row.find(key);
  return v && v->is_number() ? v->number() : std::nan("");
}

}  // namespace

int cmd_plot(int argc, char** argv) {
  CommandLine cl("plot", "lava plot --out FILE.svg --y KEY [--x KEY] [--where K=V,...] [NAME=]FILE.jsonl...",
                 "One SVG line plot with a series per JSON-lines FILE (one JSON object per line, as --format json\n"
                 "prints them): the points are the rows with numbers under --x and --y that meet every --where\n"
                 "condition, in file order. NAME= labels the series (default: the file's name without .jsonl).\n"
                 "Examples: the learning curves of several runs,\n"
                 "  lava plot --out curves.svg --y valid_ppl --where event=epoch soft=soft.train.jsonl ...\n"
                 "and PPL against K-max's K from rows of lava eval --kmax K:\n"
                 "  lava plot --out kmax.svg --x kmax --y ppl marginal=marginal.kmax.jsonl ...\n"
                 "A missing or malformed file is one line naming it (and the line) and exit 1; no point in any file\n"
                 "is an error too, since the picture would be empty. --y-max leaves out the points above it (a\n"
                 "diverged epoch would flatten every other curve) and says how many in the y label.");
  cl.options().add_options()                                                                                  //
      ("out", po::value<std::string>(), "the SVG file to write (required)")                                     //
      ("x", po::value<std::string>()->default_value("epoch"), "key of the x values")                           //
      ("y", po::value<std::string>(), "key of the y values (required)")                                        //
      ("where", po::value<std::string>()->default_value(""), "only rows with these values: KEY=VALUE,...")      //
      ("title", po::value<std::string>()->default_value(""), "the plot's title (default: Y against X)")        //
      ("x-label", po::value<std::string>()->default_value(""), "x axis label (default: the x key)")             //
      ("y-label", po::value<std::string>()->default_value(""), "y axis label (default: the y key)")             //
      ("y-max", po::value<std::string>(), "leave out the points whose y is above this (counted in the y label)");
  SplitArgs a = split_positional(argc, argv);
  std::vector<char*> v = argv_of(a.options);
  if (!cl.parse(int(a.options.size()), v.data())) return 0;
  if (!cl.has("out")) cl.fail("--out FILE.svg is required");
  if (!cl.has("y")) cl.fail("--y KEY is required");
  if (a.positional.empty()) cl.fail("needs at least one JSON-lines FILE");
  const std::string x_key = cl.get_string("x"), y_key = cl.get_string("y");
  const std::vector<Condition> where = parse_where(cl, cl.get_string("where"));
  const double y_max = cl.has("y-max") ? cl.get_double("y-max", -HUGE_VAL, HUGE_VAL) : HUGE_VAL;

  std::vector<Series> series;
  size_t points = 0, above = 0;
  for (const std::string& arg : a.positional) {
    const size_t eq = arg.find('=');
    Series s;
    const std::string path = eq == std::string::npos ? arg : arg.substr(eq + 1);
    s.name = eq == std::string::npos ? std::filesystem::path(path).stem().string() : arg.substr(0, eq);
    if (path.empty()) cl.fail("'" + arg + "' names no file");
    for (const JsonValue& row : read_json_lines(path)) {
      bool keep = true;
      for (const Condition& c : where) keep = keep && holds(row, c);
      if (!keep) continue;
      const double x = number_of(row, x_key), y = number_of(row, y_key);
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (y > y_max) {
        ++above;
        continue;
      }
      s.x.push_back(x), s.y.push_back(y);
    }
    if (s.x.empty()) std::fprintf(stderr, "lava plot: warning: %s has no row with numbers under %s and %s\n",
                                  path.c_str(), x_key.c_str(), y_key.c_str());
    points += s.x.size();
    series.push_back(std::move(s));
  }
  if (points == 0)
    throw input_error(a.positional.front(), 0, "no row of any file has numbers under --x " + x_key + " and --y " +
                                                   y_key + " (and meets --where and --y-max)");
  const std::string x_label = cl.get_string("x-label").empty() ? x_key : cl.get_string("x-label");
  std::string y_label = cl.get_string("y-label").empty() ? y_key : cl.get_string("y-label");
  if (above > 0) y_label += fmt::format(" ({} point{} above {} not shown)", above, above == 1 ? "" : "s", y_max);
  const std::string title = cl.get_string("title").empty() ? y_key + " against " + x_key : cl.get_string("title");
  write_line_plot(cl.get_string("out"), title, x_label, y_label, series);
  return 0;
}

}  // namespace lava
