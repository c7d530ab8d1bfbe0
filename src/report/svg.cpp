// SVG building blocks shared by svg_plot.cpp, svg_heatmap.cpp and svg_image.cpp: escaping, axis ticks, text
// width estimates, the colour map and the document skeleton.
#include "report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace lava {

namespace {

// XML 1.0 Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
// (next_codepoint already maps surrogates and malformed bytes to U+FFFD).
bool xml_allowed(char32_t cp) {
  if (cp < 0x20) return cp == 0x9 || cp == 0xA || cp == 0xD;
  return cp != 0xFFFE && cp != 0xFFFF;
}

bool is_wide(char32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || cp >= 0x20000;
}

double codepoint_em(char32_t cp) { return is_wide(cp) ? 1.0 : 0.6; }

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const char32_t cp = next_codepoint(text, pos);
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: append_utf8(out, xml_allowed(cp) ? cp : char32_t(0xFFFD));
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  // A range the tick labels cannot resolve (one value, or values a few ULPs apart) is padded like one value, by 10%
  // of its size (or 1 around zero), within the finite doubles. Halves, since hi − lo may overflow.
  if (hi / 2 - lo / 2 <= std::max(std::abs(lo), std::abs(hi)) * 1e-12) {
    const double mid = lo / 2 + hi / 2, pad = mid == 0 ? 1 : std::abs(mid) * 0.1;
    lo = std::max(mid - pad, -std::numeric_limits<double>::max());
    hi = std::min(mid + pad, std::numeric_limits<double>::max());
  }
  const int n = std::clamp(max_ticks, 1, 50);
  // step = the 1-2-5 multiple of a power of ten just above (hi − lo)/n; hi/n − lo/n cannot overflow.
  const double raw = hi / n - lo / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  // The 1e-9 slack keeps 0.30000000000000004 from adding a tick past 0.3.
  const double k0 = std::floor(lo / step + 1e-9), k1 = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  // Below 2^52 in size, k + 1 is another double, so the loop ends whatever the range.
  if (std::isfinite(step) && step > 0 && std::abs(k0) < 0x1p52 && std::abs(k1) < 0x1p52 && k1 - k0 <= 1000)
    for (double k = k0; k <= k1; k += 1) ticks.push_back(k * step);
  if (ticks.size() < 2 || !std::isfinite(ticks.front()) || !std::isfinite(ticks.back())) return {lo, hi};
  return ticks;
}

double range_fraction(double v, double lo, double hi) { return (v / 2 - lo / 2) / (hi / 2 - lo / 2); }

std::string format_tick(double value, double step) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  step = std::abs(step);
  if (!(step > 0) || !std::isfinite(step)) return fmt::format("{:.6g}", value);
  if (std::abs(value) < step * 1e-9) return "0";  // k·step noise around zero, and no "-0"
  // Fewest decimals d that write the step exactly (0.25 -> 2, 0.1 -> 1, 500 -> 0).
  int decimals = 0;
  while (decimals < 12) {
    const double scaled = step * std::pow(10.0, decimals);
    if (std::abs(scaled - std::round(scaled)) <= 1e-6 * scaled) break;
    ++decimals;
  }
  const double big = std::max(std::abs(value), step);
  if (big >= 1e7 || big < 1e-4 || decimals > 6) {
    const int digits = int(std::floor(std::log10(big)) - std::floor(std::log10(step))) + 1;
    return fmt::format("{:.{}g}", value, std::clamp(digits, 1, 15));
  }
  return fmt::format("{:.{}f}", value, decimals);
}

double text_width(std::string_view utf8, double font_size) {
  double em = 0;
  for (size_t pos = 0; pos < utf8.size();) em += codepoint_em(next_codepoint(utf8, pos));
  return em * font_size;
}

std::string ellipsize(std::string_view utf8, double max_width, double font_size) {
  if (text_width(utf8, font_size) <= max_width) return std::string(utf8);
  const double budget = max_width - 0.6 * font_size;  // room left for the "…"
  double used = 0;
  size_t pos = 0;
  while (pos < utf8.size()) {
    size_t next = pos;
    const double w = codepoint_em(next_codepoint(utf8, next)) * font_size;
    if (used + w > budget) break;
    used += w;
    pos = next;
  }
  return std::string(utf8.substr(0, pos)) + "\u2026";
}

std::string blues_colour(double t) {
  // ColorBrewer Blues-9, from #f7fbff (t = 0) to #08306b (t = 1), at t = 0, 1/8, ..., 1.
  static constexpr std::array<std::array<uint8_t, 3>, 9> kStops = {{{0xf7, 0xfb, 0xff},
                                                                    {0xde, 0xeb, 0xf7},
                                                                    {0xc6, 0xdb, 0xef},
                                                                    {0x9e, 0xca, 0xe1},
                                                                    {0x6b, 0xae, 0xd6},
                                                                    {0x42, 0x92, 0xc6},
                                                                    {0x21, 0x71, 0xb5},
                                                                    {0x08, 0x51, 0x9c},
                                                                    {0x08, 0x30, 0x6b}}};
  if (std::isnan(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0) * 8;
  const int i = std::min(int(t), 7);
  const double f = t - i;
  int rgb[3];
  for (int c = 0; c < 3; ++c) rgb[c] = int(std::lround(kStops[i][c] + f * (kStops[i + 1][c] - kStops[i][c])));
  return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

std::string svg_begin(double width, double height) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      std::ceil(width), std::ceil(height));
}

std::string svg_end() { return "</svg>\n"; }

void append_svg_text(std::string& out, double x, double y, std::string_view text, double font_size,
                     std::string_view anchor, std::string_view extra) {
  fmt::format_to(std::back_inserter(out), "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{:.1f}\"", x, y, font_size);
  if (anchor != "start") fmt::format_to(std::back_inserter(out), " text-anchor=\"{}\"", anchor);
  if (!extra.empty()) fmt::format_to(std::back_inserter(out), " {}", extra);
  out += '>';
  out += xml_escape(text);
  out += "</text>\n";
}

}  // namespace lava
