// Attention matrices as SVG heatmaps, alone or as a side-by-side pair on one colour scale (report/svg.hpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "report/svg.hpp"

namespace lava {

namespace {

constexpr double kTitleFont = 16, kSubtitleFont = 13, kAxisFont = 13, kScaleFont = 11;
constexpr double kMaxLabelWidth = 160;  // longer words are cut with "…" (the full word stays in each cell's title)
constexpr double kCos45 = 0.70710678118654752;
constexpr size_t kMaxCellTitles = 4000;  // hover titles per panel; beyond this they only bloat the file

struct Panel {
  const std::vector<double>* values;
  std::string_view title;
};

double clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

// The cells of one matrix with their top-left corner at (x0, y0).
void draw_matrix(std::string& out, double x0, double y0, double cell, const std::vector<std::string>& rows,
                 const std::vector<std::string>& cols, const std::vector<double>& values, bool show_values) {
  const size_t R = rows.size(), C = cols.size();
  const bool titles = R * C <= kMaxCellTitles;
  const bool numbers = show_values && cell >= 26;
  append_format(out, "<g shape-rendering=\"crispEdges\">\n");
  for (size_t r = 0; r < R; ++r)
    for (size_t c = 0; c < C; ++c) {
      const double v = values[r * C + c];
      const std::string fill = std::isnan(v) ? "url(#nan-hatch)" : blues_colour(v);
      append_format(out, "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"{}\"",
                    x0 + c * cell, y0 + r * cell, cell, cell, fill);
      if (titles)
        append_format(out, "><title>{} \u2192 {}: {:.4f}</title></rect>\n", xml_escape(rows[r]), xml_escape(cols[c]),
                      v);
      else
        out += "/>\n";
    }
  append_format(out,
                "</g>\n<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"none\" "
                "stroke=\"#555555\"/>\n",
                x0, y0, C * cell, R * cell);
  if (numbers)
    for (size_t r = 0; r < R; ++r)
      for (size_t c = 0; c < C; ++c) {
        const double v = values[r * C + c];
        if (std::isnan(v)) continue;
        append_svg_text(out, x0 + (c + 0.5) * cell, y0 + (r + 0.5) * cell + 4, fmt::format("{:.2f}", v),
                        std::min(cell * 0.36, 11.0), "middle",
                        clamp01(v) > 0.5 ? "fill=\"white\"" : "fill=\"#222222\"");
      }
}

std::string render_panels(std::string_view title, const std::vector<std::string>& row_labels,
                          const std::vector<std::string>& col_labels, const std::vector<Panel>& panels,
                          const HeatmapOptions& options) {
  const size_t R = row_labels.size(), C = col_labels.size(), P = panels.size();
  for (const Panel& p : panels)
    LAVA_CHECK(p.values->size() == R * C, "heatmap \"{}\": {} values for {} rows × {} columns", p.title,
               p.values->size(), R, C);
  bool any_nan = false, any_subtitle = false;
  for (const Panel& p : panels) {
    any_nan = any_nan || std::any_of(p.values->begin(), p.values->end(), [](double v) { return std::isnan(v); });
    any_subtitle = any_subtitle || !p.title.empty();
  }

  // Cell size from the larger dimension (the pair shares the width); label font follows the cell.
  const double cell = std::clamp(std::floor(560.0 / double(std::max<size_t>({R, C * P, 1}))), 10.0, 40.0);
  const double font = std::clamp(cell * 0.7, 8.0, 13.0);
  std::vector<std::string> rows, cols;
  double row_w = 0, col_w = 0;
  for (const auto& l : row_labels) {
    rows.push_back(ellipsize(l, kMaxLabelWidth, font));
    row_w = std::max(row_w, text_width(rows.back(), font));
  }
  for (const auto& l : col_labels) {
    cols.push_back(ellipsize(l, kMaxLabelWidth, font));
    col_w = std::max(col_w, text_width(cols.back(), font));
  }

  // Column labels rise at 45° when cells are wide enough to keep neighbours apart (their perpendicular distance
  // is cell·sin 45°); narrower cells get vertical labels, cell px apart.
  const bool slanted = cell >= 18;
  const double rise = slanted ? kCos45 : 1.0;  // vertical extent per px of label width
  const double run = slanted ? kCos45 : 0.0;   // horizontal extent per px of label width

  // Vertical: title, panel titles, the column labels (they rise col_w·rise + a font height), matrix.
  double y = 12;
  const double title_y = y + 20;
  if (!title.empty()) y += 32;
  const double subtitle_y = y + 14;
  if (any_subtitle) y += 24;
  const double top = std::round(y + (C > 0 ? col_w * rise + font + 6 : 0));
  const double mat_w = double(C) * cell, mat_h = double(R) * cell;
  // Horizontal: row-axis name, row labels, panel(s) 28 px apart, right row labels (pair only), colour scale.
  const double left = std::round(12 + (options.row_axis.empty() ? 0 : 22) + row_w + 8);
  const double gap = 28;
  std::vector<double> xs;
  for (size_t p = 0; p < P; ++p) xs.push_back(left + double(p) * (mat_w + gap));
  const double mats_end = xs.back() + mat_w;
  const double right_labels_end = P > 1 ? mats_end + 8 + row_w : mats_end;
  const double overhang = mats_end - cell / 2 + (C > 0 ? col_w * run + font : 0);  // last column label's end
  const double bar_x = std::max(right_labels_end, mats_end) + 24, bar_w = 14;
  const double bar_h = std::clamp(mat_h, 100.0, 260.0);
  const double width = std::max(bar_x + bar_w + 48, overhang + 12);
  const double bottom = std::max(top + mat_h + (options.col_axis.empty() ? 0 : 30), top + bar_h + (any_nan ? 24 : 0));
  const double height = bottom + 16;

  std::string out = svg_begin(width, height);
  out += "<defs>\n<linearGradient id=\"blues-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (int k = 0; k <= 8; ++k)
    append_format(out, "<stop offset=\"{:.3f}\" stop-color=\"{}\"/>\n", k / 8.0, blues_colour(k / 8.0));
  out += "</linearGradient>\n";
  if (any_nan)
    out +=
        "<pattern id=\"nan-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#eeeeee\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#aaaaaa\" stroke-width=\"2\"/></pattern>\n";
  out += "</defs>\n";

  if (!title.empty())
    append_svg_text(out, (left + mats_end) / 2, title_y, title, kTitleFont, "middle", "font-weight=\"bold\"");
  for (size_t p = 0; p < P; ++p) {
    if (!panels[p].title.empty())
      append_svg_text(out, xs[p] + mat_w / 2, subtitle_y, panels[p].title, kSubtitleFont, "middle");
    draw_matrix(out, xs[p], top, cell, row_labels, col_labels, *panels[p].values, options.show_values);
    for (size_t c = 0; c < C; ++c) {  // column labels rise from just above their column
      // A vertical label's baseline sits 0.35 em right of the column centre, so the glyphs straddle it.
      const double cx = xs[p] + (double(c) + 0.5) * cell + (slanted ? 0 : font * 0.35), cy = top - 6;
      append_svg_text(out, cx, cy, cols[c], font, "start",
                      fmt::format("transform=\"rotate({} {:.1f} {:.1f})\"", slanted ? -45 : -90, cx, cy));
    }
    if (!options.col_axis.empty())
      append_svg_text(out, xs[p] + mat_w / 2, top + mat_h + 22, options.col_axis, kAxisFont, "middle",
                      "fill=\"#444444\"");
  }
  for (size_t r = 0; r < R; ++r) {
    const double cy = top + (double(r) + 0.5) * cell + font * 0.35;
    append_svg_text(out, left - 6, cy, rows[r], font, "end");
    if (P > 1) append_svg_text(out, mats_end + 6, cy, rows[r], font, "start");
  }
  if (!options.row_axis.empty()) {
    const double ax = 12 + 13, ay = top + mat_h / 2;
    append_svg_text(out, ax, ay, options.row_axis, kAxisFont, "middle",
                    fmt::format("fill=\"#444444\" transform=\"rotate(-90 {:.1f} {:.1f})\"", ax, ay));
  }
  if (R * C == 0)
    append_svg_text(out, (left + mats_end) / 2 + 20, top + 40, "(empty matrix)", kAxisFont, "middle",
                    "fill=\"#888888\"");

  // Colour scale: 0 at the bottom, 1 at the top.
  append_format(out,
                "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"url(#blues-scale)\" "
                "stroke=\"#555555\"/>\n",
                bar_x, top, bar_w, bar_h);
  const double tick_step = bar_h >= 140 ? 0.25 : 0.5;
  for (double t = 0; t <= 1 + 1e-9; t += tick_step) {
    const double ty = top + bar_h * (1 - t);
    append_format(out, "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#555555\"/>\n",
                  bar_x + bar_w, ty, bar_x + bar_w + 4, ty);
    append_svg_text(out, bar_x + bar_w + 7, ty + 4, format_tick(t, tick_step), kScaleFont);
  }
  if (any_nan) {
    append_format(out,
                  "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"12\" fill=\"url(#nan-hatch)\" "
                  "stroke=\"#555555\"/>\n",
                  bar_x, top + bar_h + 10, bar_w);
    append_svg_text(out, bar_x + bar_w + 7, top + bar_h + 20, "NaN", kScaleFont);
  }
  out += svg_end();
  return out;
}

}  // namespace

std::string render_heatmap(std::string_view title, const std::vector<std::string>& row_labels,
                           const std::vector<std::string>& col_labels, const std::vector<double>& values,
                           const HeatmapOptions& options) {
  return render_panels(title, row_labels, col_labels, {{&values, ""}}, options);
}

void write_heatmap(const std::string& path, std::string_view title, const std::vector<std::string>& row_labels,
                   const std::vector<std::string>& col_labels, const std::vector<double>& values,
                   const HeatmapOptions& options) {
  write_file_atomic(path, render_heatmap(title, row_labels, col_labels, values, options));
}

std::string render_heatmap_pair(std::string_view title, const std::vector<std::string>& row_labels,
                                const std::vector<std::string>& col_labels, const std::vector<double>& left_values,
                                std::string_view left_title, const std::vector<double>& right_values,
                                std::string_view right_title, const HeatmapOptions& options) {
  return render_panels(title, row_labels, col_labels, {{&left_values, left_title}, {&right_values, right_title}},
                       options);
}

void write_heatmap_pair(const std::string& path, std::string_view title, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, const std::vector<double>& left_values,
                        std::string_view left_title, const std::vector<double>& right_values,
                        std::string_view right_title, const HeatmapOptions& options) {
  write_file_atomic(path, render_heatmap_pair(title, row_labels, col_labels, left_values, left_title, right_values,
                                              right_title, options));
}

}  // namespace lava
