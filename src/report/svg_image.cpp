// A scene image with its regions tinted by attention weight, one panel per weight vector (report/svg.hpp).
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "report/svg.hpp"

namespace lava {

namespace {

constexpr int kMaxSide = 96;        // larger images are block-averaged down to at most this many pixels a side
constexpr double kPanelSide = 264;  // target display size of a panel's longer side, in px
constexpr double kEmptySide = 240;  // panel size when there is no image
constexpr double kTitleFont = 16, kPanelFont = 13, kWeightFont = 10, kNoteFont = 11;
constexpr double kMaxTint = 0.75;  // opacity of the tint on the most-attended region
constexpr int kGrayLevels = 32;    // pixel gray is quantised so that equal neighbours merge into one <rect>
constexpr const char* kTint = "#ff3b00";

// Block-averaged image: out[i][j] = mean of the source pixels in block (i, j) (edge blocks may be partial),
// NaN counted as 0. Shapes: pixels (H, W) row-major; result (h, w) with h = ⌈H/f⌉, w = ⌈W/f⌉.
std::vector<double> block_average(const std::vector<float>& pixels, int H, int W, int f, int h, int w) {
  std::vector<double> sum(size_t(h) * size_t(w), 0.0), count(size_t(h) * size_t(w), 0.0);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const float v = pixels[size_t(y) * size_t(W) + size_t(x)];
      const size_t b = size_t(y / f) * size_t(w) + size_t(x / f);
      sum[b] += std::isnan(v) ? 0.0 : double(v);
      count[b] += 1;
    }
  for (size_t b = 0; b < sum.size(); ++b) sum[b] /= std::max(count[b], 1.0);
  return sum;
}

// The image as a <g id="scene"> of <rect>s at `s` px per (averaged) pixel: a background rect in the most common
// gray, then one rect per horizontal run of equal gray that differs from it.
std::string scene_group(const std::vector<double>& img, int h, int w, double s) {
  std::vector<int> level(img.size());
  std::array<size_t, kGrayLevels> histogram{};
  for (size_t i = 0; i < img.size(); ++i) {
    level[i] = int(std::lround(std::clamp(img[i], 0.0, 1.0) * (kGrayLevels - 1)));
    ++histogram[size_t(level[i])];
  }
  const int background = int(std::max_element(histogram.begin(), histogram.end()) - histogram.begin());
  auto gray = [](int l) {
    const int g = int(std::lround(l * 255.0 / (kGrayLevels - 1)));
    return fmt::format("#{0:02x}{0:02x}{0:02x}", g);
  };
  std::string out = "<g id=\"scene\" shape-rendering=\"crispEdges\">\n";
  append_format(out, "<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"{}\"/>\n", w * s, h * s, gray(background));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w;) {
      const int l = level[size_t(y) * size_t(w) + size_t(x)];
      int end = x + 1;
      while (end < w && level[size_t(y) * size_t(w) + size_t(end)] == l) ++end;
      if (l != background)
        append_format(out, "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"{}\"/>\n", x * s,
                      y * s, (end - x) * s, s, gray(l));
      x = end;
    }
  out += "</g>\n";
  return out;
}

}  // namespace

std::string render_image_attention(std::string_view title, const std::vector<float>& pixels, int H, int W,
                                   int grid_rows, int grid_cols, const std::vector<std::vector<double>>& weights,
                                   const std::vector<std::string>& panel_titles) {
  LAVA_CHECK(H >= 0 && W >= 0, "image attention: negative image size {}x{}", H, W);
  LAVA_CHECK(pixels.size() == size_t(H) * size_t(W), "image attention: {} pixels for a {}x{} image", pixels.size(), H,
             W);
  LAVA_CHECK(grid_rows >= 1 && grid_cols >= 1, "image attention: grid {}x{} has no regions", grid_rows, grid_cols);
  const size_t K = size_t(grid_rows) * size_t(grid_cols);
  for (size_t p = 0; p < weights.size(); ++p)
    LAVA_CHECK(weights[p].size() == K, "image attention: panel {} has {} weights for {} regions", p, weights[p].size(),
               K);
  LAVA_CHECK(panel_titles.empty() || panel_titles.size() == weights.size(),
             "image attention: {} panel titles for {} panels", panel_titles.size(), weights.size());

  const bool has_image = H > 0 && W > 0;
  const int f = has_image ? (std::max(H, W) + kMaxSide - 1) / kMaxSide : 1;
  const int h = has_image ? (H + f - 1) / f : 0, w = has_image ? (W + f - 1) / f : 0;
  const double s = has_image ? std::max(1.0, std::floor(kPanelSide / std::max(h, w))) : 0;
  const double pw = has_image ? w * s : kEmptySide, ph = has_image ? h * s : kEmptySide;
  // Region boundaries in display px: source row round(i·H / grid_rows), scaled to the panel.
  auto edge_y = [&](int i) { return has_image ? std::round(double(i) * H / grid_rows) / H * ph : ph * i / grid_rows; };
  auto edge_x = [&](int j) { return has_image ? std::round(double(j) * W / grid_cols) / W * pw : pw * j / grid_cols; };

  // One tint scale for all panels, so that prior and posterior compare directly.
  double wmax = 0;
  for (const auto& wv : weights)
    for (double v : wv)
      if (std::isfinite(v)) wmax = std::max(wmax, v);

  const size_t P = std::max<size_t>(weights.size(), 1);
  const bool any_panel_title =
      std::any_of(panel_titles.begin(), panel_titles.end(), [](const std::string& t) { return !t.empty(); });
  const double gap = 24, left = 16;
  const double top = (title.empty() ? 14 : 44) + (any_panel_title ? 22 : 0);
  const std::string note =
      weights.empty()
          ? std::string()
          : fmt::format("tint \u221d attention weight (full tint = {:.3g}); outline = largest weight per panel", wmax);
  const double width = std::max({left + double(P) * pw + double(P - 1) * gap + 16, text_width(title, kTitleFont) + 32,
                                 text_width(note, kNoteFont) + 32});
  const double height = top + ph + (note.empty() ? 16 : 36);

  std::string out = svg_begin(width, height);
  out += "<defs>\n";
  if (has_image) out += scene_group(block_average(pixels, H, W, f, h, w), h, w, s);
  out += "</defs>\n";
  if (!title.empty()) append_svg_text(out, width / 2, 30, title, kTitleFont, "middle", "font-weight=\"bold\"");

  for (size_t p = 0; p < P; ++p) {
    const double x0 = left + double(p) * (pw + gap), y0 = top;
    if (!panel_titles.empty() && !panel_titles[p].empty())
      append_svg_text(out, x0 + pw / 2, y0 - 8, ellipsize(panel_titles[p], pw + gap, kPanelFont), kPanelFont, "middle");
    if (has_image)
      append_format(out, "<use xlink:href=\"#scene\" href=\"#scene\" x=\"{:.0f}\" y=\"{:.0f}\"/>\n", x0, y0);
    else
      append_format(out, "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#dddddd\"/>\n", x0,
                    y0, pw, ph);
    if (!weights.empty()) {
      const std::vector<double>& wv = weights[p];
      size_t best = K;  // argmax over finite weights
      for (size_t k = 0; k < K; ++k)
        if (std::isfinite(wv[k]) && (best == K || wv[k] > wv[best])) best = k;
      for (size_t k = 0; k < K; ++k) {
        const int r = int(k / size_t(grid_cols)), c = int(k % size_t(grid_cols));
        const double rx = x0 + edge_x(c), ry = y0 + edge_y(r), rw = edge_x(c + 1) - edge_x(c),
                     rh = edge_y(r + 1) - edge_y(r);
        const double v = wv[k];
        if (std::isfinite(v) && v > 0 && wmax > 0)
          append_format(out,
                        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
                        "fill-opacity=\"{:.3f}\"/>\n",
                        rx, ry, rw, rh, kTint, kMaxTint * std::min(v / wmax, 1.0));
        append_format(out,
                      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
                      "stroke=\"#ffffff\" stroke-opacity=\"0.5\"/>\n",
                      rx, ry, rw, rh);
        if (rw >= 30 && rh >= 16) {  // the weight, white on a dark chip in the region's corner
          const std::string label = std::isnan(v) ? "nan" : fmt::format("{:.2f}", v);
          append_format(out,
                        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"13\" fill=\"#000000\" "
                        "fill-opacity=\"0.6\"/>\n",
                        rx + 2, ry + 2, text_width(label, kWeightFont) + 4);
          append_svg_text(out, rx + 4, ry + 12, label, kWeightFont, "start", "fill=\"white\"");
        }
      }
      const int br = int(best / size_t(grid_cols)), bc = int(best % size_t(grid_cols));
      if (best < K && edge_x(bc + 1) - edge_x(bc) > 4 && edge_y(br + 1) - edge_y(br) > 4) {
        const int r = br, c = bc;
        append_format(out,
                      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
                      "stroke=\"#ffd400\" stroke-width=\"2.5\"/>\n",
                      x0 + edge_x(c) + 1.25, y0 + edge_y(r) + 1.25, edge_x(c + 1) - edge_x(c) - 2.5,
                      edge_y(r + 1) - edge_y(r) - 2.5);
      }
    }
    append_format(
        out, "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"none\" stroke=\"#555555\"/>\n",
        x0, y0, pw, ph);
    if (!has_image)
      append_svg_text(out, x0 + pw / 2, y0 + ph / 2, "(no image)", kPanelFont, "middle", "fill=\"#777777\"");
  }
  if (!note.empty()) append_svg_text(out, left, top + ph + 22, note, kNoteFont, "start", "fill=\"#444444\"");
  out += svg_end();
  return out;
}

void write_image_attention(const std::string& path, std::string_view title, const std::vector<float>& pixels, int H,
                           int W, int grid_rows, int grid_cols, const std::vector<std::vector<double>>& weights,
                           const std::vector<std::string>& panel_titles) {
  write_file_atomic(path, render_image_attention(title, pixels, H, W, grid_rows, grid_cols, weights, panel_titles));
}

}  // namespace lava
