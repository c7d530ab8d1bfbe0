#include "train/learning_curves.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/check.hpp"
#include "report/svg.hpp"
#include "train/loop.hpp"

namespace lava {

namespace {

size_t sum_index(const std::vector<std::string>& sum_names, const std::string& name) {
  const auto it = std::find(sum_names.begin(), sum_names.end(), name);
  LAVA_CHECK(it != sum_names.end(), "learning curve: no training sum \"{}\"", name);
  return size_t(it - sum_names.begin());
}

}  // namespace

void write_learning_curves(const std::string& dir, std::string_view title, const std::vector<std::string>& sum_names,
                          const std::vector<ValidationRecord>& history, const std::vector<CurvePicture>& pictures) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw input_error(dir, 0, "cannot create the plot directory: " + ec.message());
  for (const CurvePicture& picture : pictures) {
    std::vector<Series> series;
    for (const Curve& c : picture.curves) {
      Series s{c.label, {}, {}};
      for (const ValidationRecord& r : history) {
        double y = 0;
        if (c.per.empty())
          y = figure(r.valid.figures, c.name);
        else
          y = r.train[sum_index(sum_names, c.name)] / std::max(1.0, r.train[sum_index(sum_names, c.per)]);
        s.x.push_back(r.position);
        s.y.push_back(c.sign * y);
      }
      series.push_back(std::move(s));
    }
    write_line_plot(dir + "/" + picture.file, fmt::format("{}: {}", title, picture.title), "epoch", picture.y_label,
                    series);
  }
}

}  // namespace lava
