// Learning curves as an SVG line plot (report/svg.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "report/svg.hpp"

namespace lava {

namespace {

// Tableau 10: distinguishable, and still distinct for the common forms of colour blindness when paired with the
// dash patterns used after the first ten series.
constexpr std::array<const char*, 10> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr std::array<const char*, 4> kDashes = {"", "7 4", "2 3", "9 3 2 3"};

constexpr double kPlotW = 560, kPlotH = 340;  // the data area
constexpr double kTitleFont = 16, kLabelFont = 13, kTickFont = 11, kLegendFont = 12;
constexpr double kLegendRow = 20;
constexpr int kMaxMarkers = 40;  // series with more finite points are drawn as lines only

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
  bool empty() const { return !(lo <= hi); }
};

bool finite_point(const Series& s, size_t i) { return std::isfinite(s.x[i]) && std::isfinite(s.y[i]); }

std::string series_style(size_t index) {
  std::string style = fmt::format("stroke=\"{}\"", kPalette[index % kPalette.size()]);
  const char* dash = kDashes[(index / kPalette.size()) % kDashes.size()];
  if (*dash) style += fmt::format(" stroke-dasharray=\"{}\"", dash);
  return style;
}

}  // namespace

std::string render_line_plot(std::string_view title, std::string_view x_label, std::string_view y_label,
                             const std::vector<Series>& series) {
  Range xr, yr;
  for (size_t s = 0; s < series.size(); ++s) {
    const Series& ser = series[s];
    LAVA_CHECK(ser.x.size() == ser.y.size(), "line plot series {} (\"{}\"): {} x values but {} y values", s, ser.name,
               ser.x.size(), ser.y.size());
    for (size_t i = 0; i < ser.x.size(); ++i)
      if (finite_point(ser, i)) xr.add(ser.x[i]), yr.add(ser.y[i]);
  }
  const bool no_data = xr.empty();
  // nice_ticks pads a single value and returns {0, 1}'s ticks for an empty (infinite) range.
  const std::vector<double> xt = nice_ticks(xr.lo, xr.hi, 8), yt = nice_ticks(yr.lo, yr.hi, 6);
  const double x0 = xt.front(), x1 = xt.back(), y0 = yt.front(), y1 = yt.back();
  const double xstep = xt[1] - xt[0], ystep = yt[1] - yt[0];

  std::vector<std::string> ytext;
  double ytick_w = 0;
  for (double v : yt) {
    ytext.push_back(format_tick(v, ystep));
    ytick_w = std::max(ytick_w, text_width(ytext.back(), kTickFont));
  }
  std::vector<std::string> names;
  double legend_w = 0;
  for (size_t s = 0; s < series.size(); ++s) {
    names.push_back(
        ellipsize(series[s].name.empty() ? fmt::format("series {}", s + 1) : series[s].name, 260, kLegendFont));
    legend_w = std::max(legend_w, 40 + text_width(names.back(), kLegendFont));
  }

  // Layout, left to right: y label, y tick labels, plot, legend; top to bottom: title, plot, x ticks, x label.
  const double left = 16 + (y_label.empty() ? 0 : 22) + ytick_w + 10;
  const double top = title.empty() ? 20 : 50;
  const double legend_x = left + kPlotW + 24;
  const double width = legend_x + legend_w + 16;
  const double height =
      std::max(top + kPlotH + 36 + (x_label.empty() ? 0 : 24) + 10, top + 10 + kLegendRow * double(series.size()) + 10);
  auto px = [&](double x) { return left + range_fraction(x, x0, x1) * kPlotW; };
  auto py = [&](double y) { return top + kPlotH - range_fraction(y, y0, y1) * kPlotH; };

  std::string out = svg_begin(width, height);
  auto put = [&]<class... Args>(fmt::format_string<Args...> f, Args&&... args) {
    append_format(out, f, std::forward<Args>(args)...);
  };
  if (!title.empty()) append_svg_text(out, left + kPlotW / 2, 30, title, kTitleFont, "middle", "font-weight=\"bold\"");

  // Grid and ticks.
  put("<g stroke=\"#e6e6e6\" stroke-width=\"1\">\n");
  for (double v : xt)
    put("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", px(v), top, top + kPlotH);
  for (double v : yt)
    put("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>\n", left, py(v), left + kPlotW);
  put("</g>\n<g stroke=\"#333333\" stroke-width=\"1\">\n");
  for (double v : xt)
    put("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", px(v), top + kPlotH, top + kPlotH + 5);
  for (double v : yt)
    put("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>\n", left - 5, py(v), left);
  put("</g>\n");
  for (double v : xt) append_svg_text(out, px(v), top + kPlotH + 19, format_tick(v, xstep), kTickFont, "middle");
  for (size_t i = 0; i < yt.size(); ++i) append_svg_text(out, left - 8, py(yt[i]) + 4, ytext[i], kTickFont, "end");
  put("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333333\"/>\n", left,
      top, kPlotW, kPlotH);
  if (!x_label.empty()) append_svg_text(out, left + kPlotW / 2, top + kPlotH + 44, x_label, kLabelFont, "middle");
  if (!y_label.empty()) {
    const double yx = 16 + 13, yy = top + kPlotH / 2;
    append_svg_text(out, yx, yy, y_label, kLabelFont, "middle",
                    fmt::format("transform=\"rotate(-90 {:.1f} {:.1f})\"", yx, yy));
  }
  if (no_data)
    append_svg_text(out, left + kPlotW / 2, top + kPlotH / 2, "no data", kLabelFont, "middle", "fill=\"#888888\"");

  // Series: one polyline per run of finite points (a NaN or Inf breaks the line); markers when points are few,
  // and always for a run of one point, which a polyline would not show.
  for (size_t s = 0; s < series.size(); ++s) {
    const Series& ser = series[s];
    const std::string style = series_style(s);
    const char* colour = kPalette[s % kPalette.size()];
    size_t finite = 0;
    for (size_t i = 0; i < ser.x.size(); ++i) finite += finite_point(ser, i);
    put("<g fill=\"none\" stroke-width=\"1.8\" stroke-linejoin=\"round\" {}>\n", style);
    for (size_t i = 0; i < ser.x.size();) {
      if (!finite_point(ser, i)) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < ser.x.size() && finite_point(ser, j)) ++j;
      if (j - i >= 2) {
        put("<polyline points=\"");
        for (size_t k = i; k < j; ++k) put("{}{:.2f},{:.2f}", k == i ? "" : " ", px(ser.x[k]), py(ser.y[k]));
        put("\"/>\n");
      }
      if (j - i == 1 || finite <= size_t(kMaxMarkers))
        for (size_t k = i; k < j; ++k)
          put("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"2.6\" fill=\"{}\" stroke=\"none\"/>\n", px(ser.x[k]),
              py(ser.y[k]), colour);
      i = j;
    }
    put("</g>\n");
  }

  // Legend: a line swatch in the series' colour and dash, then the name.
  for (size_t s = 0; s < series.size(); ++s) {
    const double y = top + 10 + kLegendRow * double(s);
    put("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke-width=\"2\" {}/>\n", legend_x, y,
        legend_x + 28, y, series_style(s));
    append_svg_text(out, legend_x + 36, y + 4, names[s], kLegendFont);
  }
  out += svg_end();
  return out;
}

void write_line_plot(const std::string& path, std::string_view title, std::string_view x_label,
                     std::string_view y_label, const std::vector<Series>& series) {
  write_file_atomic(path, render_line_plot(title, x_label, y_label, series));
}

}  // namespace lava
