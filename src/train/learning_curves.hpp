#pragma once
// Learning curves of any task by figure name: each picture plots, against the epoch (position), curves read from
// the run's validation records, either a validation figure or a training sum over another (e.g. the objective per
// token). Every task's `--plot` pictures of its run's progress go through here.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "train/task.hpp"

namespace lava {

struct Curve {
  std::string label;
  std::string name;   // a validation figure, or (with `per`) a training sum (TrainTask::sum_names)
  std::string per;    // "": `name` is a validation figure; else the training sum it is divided by (at least 1)
  double sign = 1;    // -1 plots the negative (a bound as nats)
};
// A validation figure's curve, and a training sum's per unit (`per`, another sum); sign -1 plots the negative.
inline Curve valid_curve(std::string label, std::string figure, double sign = 1) {
  return {std::move(label), std::move(figure), "", sign};
}
inline Curve train_curve(std::string label, std::string sum, std::string per, double sign = 1) {
  return {std::move(label), std::move(sum), std::move(per), sign};
}

struct CurvePicture {
  std::string file;     // in the plot directory, e.g. "learning-curves.svg"
  std::string title;    // after the run's title and ": "
  std::string y_label;
  std::vector<Curve> curves;
};

// Writes every picture into `dir` (created if needed); `title` names the run, `sum_names` are the task's.
void write_learning_curves(const std::string& dir, std::string_view title, const std::vector<std::string>& sum_names,
                          const std::vector<ValidationRecord>& history, const std::vector<CurvePicture>& pictures);

}  // namespace lava
