// SVG pictures: every document is checked by a tiny XML well-formedness checker (balanced tags, quoted
// attributes, escaped text, valid UTF-8), for its labels, and against NaN, empty and degenerate input.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "report/svg.hpp"
#include "support/temp_dir.hpp"
#include "support/xml_check.hpp"

namespace fs = std::filesystem;

namespace {

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

// NaN or infinity printed into a coordinate would make the SVG unrenderable.
bool has_non_finite_number(const std::string& doc) {
  return doc.find("nan\"") != std::string::npos || doc.find("inf\"") != std::string::npos ||
         doc.find("nan,") != std::string::npos || doc.find("=\"-nan") != std::string::npos;
}

}  // namespace

TEST_CASE("svg: the well-formedness checker itself rejects broken documents") {
  CHECK(xml_problem("<svg><g></g></svg>") == "");
  CHECK(xml_problem("<svg a=\"1 &amp; 2\"><text>x &lt; y</text></svg>") == "");
  CHECK(xml_problem("<svg><g></svg>") != "");
  CHECK(xml_problem("<svg><text>a & b</text></svg>") != "");
  CHECK(xml_problem("<svg><text>a < b</text></svg>") != "");
  CHECK(xml_problem("<svg a=\"x\"y\"></svg>") != "");
  CHECK(xml_problem("<svg></svg><svg></svg>") != "");
  CHECK(xml_problem("<svg><text>\xff</text></svg>") != "");
}

TEST_CASE("svg: xml_escape escapes markup, keeps UTF-8 and replaces what XML cannot hold") {
  CHECK(lava::xml_escape("a&b<c>\"d'e") == "a&amp;b&lt;c&gt;&quot;d&apos;e");
  CHECK(lava::xml_escape("für → 東京") == "für → 東京");
  CHECK(lava::xml_escape("tab\there") == "tab\there");
  CHECK(lava::xml_escape(std::string("a\x01z", 3)) == "a\uFFFDz");
  CHECK(lava::xml_escape(std::string("a\0z", 3)) == "a\uFFFDz");
  CHECK(lava::xml_escape("bad \xC3 byte") == "bad \uFFFD byte");
  CHECK(lava::xml_escape("\xEF\xBF\xBF") == "\uFFFD");  // U+FFFF is not an XML character
}

TEST_CASE("svg: nice ticks cover the range at 1-2-5 steps and format with just enough decimals") {
  CHECK(lava::nice_ticks(0, 1, 5) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  std::vector<double> t = lava::nice_ticks(3.7, 97.2, 6);  // step 20: 0, 20, ..., 100
  CHECK(t.front() == 0);
  CHECK(t.back() == 100);
  CHECK(t.size() == 6);
  std::vector<double> one = lava::nice_ticks(3, 3, 5);  // one value: padded to a real range around it
  CHECK(one.size() >= 2);
  CHECK(one.front() < 3);
  CHECK(one.back() > 3);
  std::vector<double> zero = lava::nice_ticks(0, 0, 5);
  CHECK(zero.front() < 0);
  CHECK(zero.back() > 0);
  std::vector<double> bad = lava::nice_ticks(NAN, 1, 5);
  CHECK(bad.front() == 0);
  CHECK(bad.back() == 1);
  std::vector<double> huge = lava::nice_ticks(-1e308, 1e308, 5);
  CHECK(huge.size() >= 2);
  for (double v : huge) CHECK(std::isfinite(v));

  CHECK(lava::format_tick(0.30000000000000004, 0.1) == "0.3");
  CHECK(lava::format_tick(0.25, 0.25) == "0.25");
  CHECK(lava::format_tick(1500, 500) == "1500");
  CHECK(lava::format_tick(-1e-17, 0.1) == "0");
  CHECK(lava::format_tick(1.2e-7, 1e-8) == "1.2e-07");
  CHECK(lava::format_tick(3e9, 1e9) == "3e+09");
}

TEST_CASE("svg: nice ticks end for every pair of doubles, and points stay finite on a span wider than DBL_MAX") {
  const double big = std::numeric_limits<double>::max(), tiny = std::numeric_limits<double>::denorm_min();
  const std::pair<double, double> ranges[] = {
      {1, std::nextafter(1.0, 2.0)}, {1e300, std::nextafter(1e300, 1e301)}, {-1, std::nextafter(-1.0, 0.0)},
      {big, big}, {-big, -big}, {-big, big}, {std::nextafter(big, 0.0), big}, {0, tiny}, {tiny, tiny},
      {-1e308, 1e308}, {1e308, 1e308}, {4503599627370496.0, 4503599627370497.0}, {1e16, 1e16 + 2}};
  for (const auto& [lo, hi] : ranges) {
    CAPTURE(lo);
    CAPTURE(hi);
    const std::vector<double> t = lava::nice_ticks(lo, hi, 6);
    REQUIRE(t.size() >= 2);
    CHECK(t.size() <= 60);
    CHECK(t.front() <= lo);
    CHECK(t.back() >= hi);
    for (size_t i = 0; i < t.size(); ++i) {
      CHECK(std::isfinite(t[i]));
      if (i) CHECK(t[i] > t[i - 1]);
    }
    CHECK(std::isfinite(lava::range_fraction(hi, t.front(), t.back())));
  }
  CHECK(lava::range_fraction(1e308, -1e308, 1e308) == 1);
  CHECK(lava::range_fraction(0, -1e308, 1e308) == 0.5);
  lava::Series s{"s", {0, 1, 2}, {-1e308, 0, 1e308}};
  const std::string svg = lava::render_line_plot("t", "x", "y", {s});
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
}

TEST_CASE("svg: colour map, text width and ellipsis") {
  CHECK(lava::blues_colour(0) == "#f7fbff");
  CHECK(lava::blues_colour(1) == "#08306b");
  CHECK(lava::blues_colour(7) == "#08306b");
  CHECK(lava::blues_colour(NAN) == "#f7fbff");
  CHECK(lava::blues_colour(0.5) == "#6baed6");
  CHECK(lava::text_width("abcd", 10) == doctest::Approx(24));
  CHECK(lava::text_width("für", 10) == doctest::Approx(18));  // code points, not bytes
  CHECK(lava::ellipsize("short", 100, 10) == "short");
  std::string cut = lava::ellipsize("a very long word indeed", 60, 10);
  CHECK(cut.ends_with("\u2026"));
  CHECK(lava::text_width(cut, 10) <= 60);
}

TEST_CASE("svg: line plot draws axes, legend and series, breaking lines at NaN") {
  std::vector<lava::Series> s = {
      {"train <ppl> & co", {1, 2, 3, 4, 5}, {9.5, 7.1, NAN, 6.2, 6.0}},
      {"valid für", {1, 2, 3, 4, 5}, {10.1, 8.0, 7.4, 7.0, INFINITY}},
  };
  std::string doc = lava::render_line_plot("PPL \"soft\" vs 'var'", "epoch", "perplexity", s);
  CHECK(xml_problem(doc) == "");
  CHECK(doc.find("PPL &quot;soft&quot; vs &apos;var&apos;") != std::string::npos);
  CHECK(doc.find("train &lt;ppl&gt; &amp; co") != std::string::npos);
  CHECK(doc.find("valid für") != std::string::npos);
  CHECK(doc.find(">epoch<") != std::string::npos);
  CHECK(doc.find(">perplexity<") != std::string::npos);
  CHECK(count(doc, "<polyline") == 3);  // series 1: [1,2] and [4,5]; series 2: [1..4]
  CHECK(count(doc, "<circle") == 8);    // few points: every finite point is marked
  CHECK(doc.find("#1f77b4") != std::string::npos);
  CHECK(doc.find("#ff7f0e") != std::string::npos);
  CHECK(doc.find(">10<") != std::string::npos);  // a y tick label (range 6..10.1 -> ticks 6, 7, ..., 11)
  CHECK_FALSE(has_non_finite_number(doc));
}

TEST_CASE("svg: line plot survives degenerate input") {
  SUBCASE("a single point") {
    std::string doc = lava::render_line_plot("one", "x", "y", {{"p", {3}, {0.5}}});
    CHECK(xml_problem(doc) == "");
    CHECK(count(doc, "<circle") == 1);
    CHECK_FALSE(has_non_finite_number(doc));
  }
  SUBCASE("a constant series") {
    std::string doc = lava::render_line_plot("flat", "x", "y", {{"c", {0, 1, 2}, {4, 4, 4}}});
    CHECK(xml_problem(doc) == "");
    CHECK(count(doc, "<polyline") == 1);
    CHECK_FALSE(has_non_finite_number(doc));
  }
  SUBCASE("no series, empty series, all-NaN series") {
    for (const auto& series : {std::vector<lava::Series>{}, std::vector<lava::Series>{{"e", {}, {}}},
                               std::vector<lava::Series>{{"n", {NAN, 1}, {1, NAN}}}}) {
      std::string doc = lava::render_line_plot("", "", "", series);
      CHECK(xml_problem(doc) == "");
      CHECK(doc.find("no data") != std::string::npos);
      CHECK_FALSE(has_non_finite_number(doc));
    }
  }
  SUBCASE("many series cycle colours, then dashes") {
    std::vector<lava::Series> many;
    for (int k = 0; k < 12; ++k) many.push_back({fmt::format("s{}", k), {0, 1}, {double(k), double(k + 1)}});
    std::string doc = lava::render_line_plot("many", "x", "y", many);
    CHECK(xml_problem(doc) == "");
    CHECK(count(doc, "stroke-dasharray") >= 4);  // series 10 and 11: line and legend swatch
  }
  CHECK_THROWS_AS(lava::render_line_plot("bad", "x", "y", {{"xy", {1, 2, 3}, {1, 2}}}), std::logic_error);
}

TEST_CASE("svg: heatmap puts the words on both axes and a colour scale beside") {
  std::vector<std::string> rows = {"the", "cat", "<eos>"};
  std::vector<std::string> cols = {"die", "Katze", "&", "\"x\""};
  std::vector<double> v = {0.9, 0.1, 0, 0, 0.05, 0.85, 0.1, 0, NAN, 0, 0.5, 1.2};
  lava::HeatmapOptions axes;
  axes.row_axis = "target";
  axes.col_axis = "source";
  std::string doc = lava::render_heatmap("attention", rows, cols, v, axes);
  CHECK(xml_problem(doc) == "");
  CHECK(doc.find(">the<") != std::string::npos);
  CHECK(doc.find(">&lt;eos&gt;<") != std::string::npos);
  CHECK(doc.find(">Katze<") != std::string::npos);
  CHECK(doc.find(">&amp;<") != std::string::npos);
  CHECK(doc.find(">&quot;x&quot;<") != std::string::npos);
  CHECK(count(doc, "rotate(-45") == 4);
  CHECK(doc.find(">target<") != std::string::npos);
  CHECK(doc.find(">source<") != std::string::npos);
  CHECK(count(doc, "<title>") == 12);
  CHECK(doc.find("cat \u2192 Katze: 0.8500") != std::string::npos);
  CHECK(doc.find("url(#nan-hatch)") != std::string::npos);    // the NaN cell
  CHECK(doc.find("fill=\"#08306b\"") != std::string::npos);   // 1.2 clamps to the darkest colour
  CHECK(doc.find("url(#blues-scale)") != std::string::npos);  // colour scale
  CHECK_FALSE(has_non_finite_number(doc));

  SUBCASE("values in large cells") {
    lava::HeatmapOptions numbers;
    numbers.show_values = true;
    std::string big = lava::render_heatmap("", {"a"}, {"b", "c"}, {0.25, 0.75}, numbers);
    CHECK(xml_problem(big) == "");
    CHECK(big.find(">0.25<") != std::string::npos);
    CHECK(big.find(">0.75<") != std::string::npos);
  }
  SUBCASE("empty matrix") {
    std::string empty = lava::render_heatmap("nothing", {}, {}, {});
    CHECK(xml_problem(empty) == "");
    CHECK(empty.find("(empty matrix)") != std::string::npos);
    CHECK(xml_problem(lava::render_heatmap("no columns", {"a", "b"}, {}, {})) == "");
  }
  CHECK_THROWS_AS(lava::render_heatmap("bad", rows, cols, {0.5}), std::logic_error);
}

TEST_CASE("svg: heatmap pair shows two panels with their titles on one scale") {
  std::vector<std::string> rows = {"a", "b"}, cols = {"x", "y", "z"};
  std::vector<double> prior = {0.2, 0.3, 0.5, 0.6, 0.2, 0.2}, post = {0.9, 0.05, 0.05, 0.1, 0.8, 0.1};
  std::string doc =
      lava::render_heatmap_pair("prior vs posterior", rows, cols, prior, "prior p(z|x)", post, "posterior q(z|x,y)");
  CHECK(xml_problem(doc) == "");
  CHECK(doc.find(">prior p(z|x)<") != std::string::npos);
  CHECK(doc.find(">posterior q(z|x,y)<") != std::string::npos);
  CHECK(count(doc, "<title>") == 12);
  CHECK(count(doc, ">a</text>") == 2);  // row labels on both outer sides
  CHECK(count(doc, "rotate(-45") == 6);
  CHECK(count(doc, "url(#blues-scale)") == 1);
  CHECK_THROWS_AS(lava::render_heatmap_pair("", rows, cols, prior, "", {0.1}, ""), std::logic_error);
  CHECK_THROWS_AS(lava::render_heatmap_pair("", rows, cols, {}, "", post, ""), std::logic_error);
}

TEST_CASE("svg: image attention draws the scene once and tints regions per panel") {
  const int H = 84, W = 84;
  std::vector<float> px(H * W, 0.f);
  for (int y = 30; y < 50; ++y)
    for (int x = 10; x < 20; ++x) px[y * W + x] = 1.f;  // a white bar in the middle-left region
  px[0] = NAN;
  std::vector<std::vector<double>> w = {{0.1, 0.1, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1},
                                        {0.0, 0.0, 0.0, 0.8, 0.1, 0.0, 0.0, 0.1, NAN}};
  std::string doc = lava::render_image_attention("where is the <bag> ?", px, H, W, 3, 3, w, {"prior", "posterior"});
  CHECK(xml_problem(doc) == "");
  CHECK(count(doc, "id=\"scene\"") == 1);
  CHECK(count(doc, "<use ") == 2);
  CHECK(doc.find("where is the &lt;bag&gt; ?") != std::string::npos);
  CHECK(doc.find(">prior<") != std::string::npos);
  CHECK(doc.find(">posterior<") != std::string::npos);
  CHECK(doc.find("fill=\"#ffffff\"") != std::string::npos);  // the white bar's pixels
  CHECK(count(doc, "fill-opacity=\"0.750\"") == 1);          // full tint only on the largest weight (0.8)
  CHECK(count(doc, "stroke=\"#ffd400\"") == 2);              // one argmax outline per panel
  CHECK(doc.find(">0.80<") != std::string::npos);
  CHECK(doc.find(">nan<") != std::string::npos);
  CHECK_FALSE(has_non_finite_number(doc));
  // The background is one rect; the bar is 20 runs of one rect each (3 px per pixel at 84 x 84).
  CHECK(count(doc, "width=\"30\" height=\"3\"") == 20);

  SUBCASE("a large image is block-averaged to at most 96 pixels a side") {
    std::vector<float> big(300 * 200, 0.5f);
    std::string d = lava::render_image_attention("", big, 300, 200, 2, 2, {{0.25, 0.25, 0.25, 0.25}}, {});
    CHECK(xml_problem(d) == "");
    // f = ⌈300/96⌉ = 4 -> 75 x 50 blocks, shown at ⌊264/75⌋ = 3 px each: a 150 x 225 panel, one gray.
    CHECK(d.find("<rect width=\"150\" height=\"225\" fill=\"#848484\"/>") != std::string::npos);
    CHECK(count(d, "height=\"3\"") == 0);  // uniform gray: the background rect is the whole image
  }
  SUBCASE("no image, no weights, odd grid") {
    CHECK(xml_problem(lava::render_image_attention("empty", {}, 0, 0, 3, 3, w, {})) == "");
    CHECK(xml_problem(lava::render_image_attention("plain", px, H, W, 3, 3, {}, {})) == "");
    CHECK(xml_problem(lava::render_image_attention("tiny", {0.5f, 1.f}, 1, 2, 4, 5, {std::vector<double>(20, 0.05)},
                                                   {})) == "");
  }
  CHECK_THROWS_AS(lava::render_image_attention("", px, H, W, 3, 3, {{0.5, 0.5}}, {}), std::logic_error);
  CHECK_THROWS_AS(lava::render_image_attention("", px, H, W, 3, 3, w, {"only one"}), std::logic_error);
  CHECK_THROWS_AS(lava::render_image_attention("", px, H, W - 1, 3, 3, w, {}), std::logic_error);
  CHECK_THROWS_AS(lava::render_image_attention("", px, H, W, 0, 3, {}, {}), std::logic_error);
}

TEST_CASE("svg: write_* put exactly the rendered document in place, atomically") {
  TempDir tmp;
  std::vector<lava::Series> s = {{"a", {0, 1}, {1, 2}}};
  lava::write_line_plot(tmp.file("plot.svg"), "t", "x", "y", s);
  CHECK(lava::read_file(tmp.file("plot.svg")) == lava::render_line_plot("t", "x", "y", s));
  lava::write_heatmap(tmp.file("h.svg"), "t", {"r"}, {"c"}, {0.5});
  CHECK(lava::read_file(tmp.file("h.svg")) == lava::render_heatmap("t", {"r"}, {"c"}, {0.5}));
  lava::write_heatmap_pair(tmp.file("p.svg"), "t", {"r"}, {"c"}, {0.5}, "l", {0.1}, "r");
  CHECK(xml_problem(lava::read_file(tmp.file("p.svg"))) == "");
  lava::write_image_attention(tmp.file("i.svg"), "t", {0.f, 1.f, 1.f, 0.f}, 2, 2, 1, 2, {{0.3, 0.7}}, {"q"});
  CHECK(xml_problem(lava::read_file(tmp.file("i.svg"))) == "");
  CHECK(tmp.entries() == 4);  // no temp files left behind
  CHECK_THROWS_AS(lava::write_line_plot(tmp.file("missing-dir/plot.svg"), "t", "x", "y", s), lava::InputError);
  CHECK(tmp.entries() == 4);
}
