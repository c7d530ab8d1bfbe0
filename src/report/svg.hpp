#pragma once
// Pictures for the experiments, as hand-written SVG text (no dependencies), each written atomically
// (core/atomic_file.hpp): learning curves, attention matrices with the words on the axes, and a scene image with
// its regions tinted by attention weight. Every render_* returns the SVG document; write_* writes it to `path`.
//
// Input that only a bug produces (x and y of different lengths, a matrix whose size is not rows × cols, a weight
// vector of the wrong length) throws std::logic_error via LAVA_CHECK. Data that experiments legitimately produce
// never throws: NaN/Inf points are skipped, NaN cells are hatched, empty inputs give an empty but valid picture,
// values outside [0, 1] are clamped for colouring. Text is XML-escaped; UTF-8 words pass through unchanged and
// invalid UTF-8 or XML-forbidden control characters become U+FFFD.
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace lava {

// ---- learning curves --------------------------------------------------------------------------------------------

struct Series {
  std::string name;
  std::vector<double> x, y;  // same length (LAVA_CHECK); a point with a non-finite x or y is a gap in the line
};

// Axes with ticks and numbers, light grid, one colour (and, past ten series, one dash pattern) per series,
// a legend on the right. A single point or a constant series gets a range padded around its value.
std::string render_line_plot(std::string_view title, std::string_view x_label, std::string_view y_label,
                             const std::vector<Series>& series);
void write_line_plot(const std::string& path, std::string_view title, std::string_view x_label,
                     std::string_view y_label, const std::vector<Series>& series);

// ---- attention matrices -----------------------------------------------------------------------------------------

struct HeatmapOptions {
  std::string row_axis;      // e.g. "target": written vertically left of the row labels ("" = none)
  std::string col_axis;      // e.g. "source": written under the matrix ("" = none)
  bool show_values = false;  // print each value in its cell when cells are large enough to hold it
};

// values: rows × cols, row-major (row r, column c at r * cols + c), meant to lie in [0, 1] (0 white, 1 dark
// blue). Column labels stand above the matrix, rotated 45° (90° when cells are narrow); a colour scale sits on the
// right; each cell carries a <title> "row → col: value" that browsers show on hover.
std::string render_heatmap(std::string_view title, const std::vector<std::string>& row_labels,
                           const std::vector<std::string>& col_labels, const std::vector<double>& values,
                           const HeatmapOptions& options = {});
void write_heatmap(const std::string& path, std::string_view title, const std::vector<std::string>& row_labels,
                   const std::vector<std::string>& col_labels, const std::vector<double>& values,
                   const HeatmapOptions& options = {});

// Two matrices of the same shape side by side on one colour scale (e.g. prior p(z|x) vs posterior q(z|x,y)):
// row labels left of the left panel and right of the right panel.
std::string render_heatmap_pair(std::string_view title, const std::vector<std::string>& row_labels,
                                const std::vector<std::string>& col_labels, const std::vector<double>& left_values,
                                std::string_view left_title, const std::vector<double>& right_values,
                                std::string_view right_title, const HeatmapOptions& options = {});
void write_heatmap_pair(const std::string& path, std::string_view title, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, const std::vector<double>& left_values,
                        std::string_view left_title, const std::vector<double>& right_values,
                        std::string_view right_title, const HeatmapOptions& options = {});

// ---- image attention --------------------------------------------------------------------------------------------

// pixels: H × W grayscale in [0, 1], row-major (0 black). The image is cut into grid_rows × grid_cols regions
// (region k at row k / grid_cols, column k % grid_cols; boundaries at round(i·H / grid_rows)) and drawn once per
// entry of `weights` (each of length grid_rows · grid_cols), side by side, every region tinted with opacity
// ∝ its weight / the largest weight over all panels and labelled with the weight. panel_titles is empty or has
// one title per panel. No weights draws the plain image once. Images larger than 96 pixels a side are shown
// block-averaged; the pixels are <rect>s (no embedded PNG), drawn once and reused by every panel.
std::string render_image_attention(std::string_view title, const std::vector<float>& pixels, int H, int W,
                                   int grid_rows, int grid_cols, const std::vector<std::vector<double>>& weights,
                                   const std::vector<std::string>& panel_titles);
void write_image_attention(const std::string& path, std::string_view title, const std::vector<float>& pixels, int H,
                           int W, int grid_rows, int grid_cols, const std::vector<std::vector<double>>& weights,
                           const std::vector<std::string>& panel_titles);

// ---- building blocks (shared by the renderers, unit-tested) -----------------------------------------------------

// Text for element content and attribute values: & < > " ' escaped, invalid UTF-8 and the control characters
// XML 1.0 forbids (all below U+0020 except tab, LF, CR; U+FFFE, U+FFFF) replaced by U+FFFD.
std::string xml_escape(std::string_view text);

// Tick positions at a 1-2-5 step covering [lo, hi]: first tick ≤ lo, last ≥ hi, at most about max_ticks + 1
// ticks. A range too narrow for the labels to tell its ends apart (lo = hi, or a few ULPs) is padded to a wider
// one; non-finite bounds give the ticks of [0, 1]. Ends after a few dozen steps for every pair of doubles.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
// Where v lies in [lo, hi], as 0..1: (v − lo) / (hi − lo) computed so that a span like [−1e308, 1e308], whose
// width is not a finite double, still places points (lo < hi).
double range_fraction(double v, double lo, double hi);
// A tick label with just enough decimals for the step between ticks ("0.25", "1500", "1.2e-07").
std::string format_tick(double value, double step);

// Width in pixels of UTF-8 text in the sans-serif font at `font_size`, estimated per code point (no font
// metrics are available): 0.6 em for most characters, 1 em for wide East Asian ones.
double text_width(std::string_view utf8, double font_size);

// The longest prefix of `utf8` (whole code points) that fits max_width, with "…" appended when cut.
std::string ellipsize(std::string_view utf8, double max_width, double font_size);

// ColorBrewer "Blues" (9 classes), linearly interpolated: 0 -> #f7fbff, 1 -> #08306b; t is clamped to [0, 1],
// NaN gives the 0 colour.
std::string blues_colour(double t);

// Document skeleton: XML declaration, <svg> root (size, viewBox, the sans-serif font family) and a white
// background; svg_end() closes the root.
std::string svg_begin(double width, double height);
std::string svg_end();
// fmt::format_to onto the end of `out` (format string checked at compile time).
template <class... Args>
void append_format(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}
// One <text> element with escaped content. anchor is "start", "middle" or "end"; `extra` is appended to the
// attributes verbatim (for trusted, already-escaped attributes such as transform or font-weight).
void append_svg_text(std::string& out, double x, double y, std::string_view text, double font_size,
                     std::string_view anchor = "start", std::string_view extra = "");

}  // namespace lava
