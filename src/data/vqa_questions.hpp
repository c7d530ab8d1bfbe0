#pragma once
// The VQA input format: questions as TSV, plus per-image region features behind one interface.
//
// Questions TSV (UTF-8, one question per line; lines starting with '#' and blank lines are skipped; '\r\n' is fine):
//   column 1  image          index of the image in the region features, 0 <= image < num_images
//   column 2  question       tokenized words separated by spaces, e.g. "what is left of the bag ?"
//   column 3  answer         the training target (for real VQA: the most frequent human answer); non-empty
//   column 4  answer counts  optional; "answer:count" items separated by ',' (split at the last ':'), e.g.
//                            "yes:8,no:2"; how many annotators gave each answer, for the VQA metric
//                            min(count / 3, 1). Empty = none given. Answers in this column cannot contain ','.
//   column 5  question type  optional; free text used to break results down ("what_at", "is_there", ...)
//   column 6  regions        optional; the annotated regions that answer the question, e.g. "0,4"; empty = none
// Columns 4-6 may be left out from the right, or left empty. More than 6 columns, a missing column 2 or 3, a
// non-integer or out-of-range image or region, or a malformed count is an InputError "FILE:LINE: what".
//
// Region features: images x regions x dim floats. `NpyRegionFeatures` reads a float32 .npy file of that shape
// (see npy_file.hpp); `SceneSet` (scenes.hpp) computes them on the fly for the Fashion-MNIST scenes.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "data/npy_file.hpp"

namespace lava {

struct VqaQuestion {
  int image = 0;
  std::vector<std::string> words;
  std::string answer;
  std::vector<std::pair<std::string, int>> answer_counts;  // empty: only `answer` is known
  std::string qtype;
  std::vector<int> regions;  // annotated regions, ascending as written
};

// num_regions < 0 skips the region range check (when the features are not open yet).
std::vector<VqaQuestion> read_vqa_questions(const std::string& path, int num_images, int num_regions = -1);
// Atomic; writes the '#' column header first. Words, answers and types must not contain tabs or newlines.
void write_vqa_questions(const std::string& path, const std::vector<VqaQuestion>& questions);

class RegionFeatures {
 public:
  virtual ~RegionFeatures() = default;
  virtual int num_images() const = 0;
  virtual int num_regions() const = 0;
  virtual int dim() const = 0;
  // out: (num_regions, dim), row-major. Thread-safe; 0 <= image < num_images().
  virtual void get(int image, float* out) const = 0;
};

// Region features from a (images, regions, dim) float32 .npy file, read one image at a time.
class NpyRegionFeatures final : public RegionFeatures {
 public:
  explicit NpyRegionFeatures(const std::string& path);  // InputError unless rank 3 with all dims >= 1
  int num_images() const override { return int(file_.shape()[0]); }
  int num_regions() const override { return int(file_.shape()[1]); }
  int dim() const override { return int(file_.shape()[2]); }
  void get(int image, float* out) const override;

 private:
  NpyFile file_;
};

// A `.npy` path opens NpyRegionFeatures; a directory made by `lava data scenes` opens that split's SceneSet
// ("train", "valid" or "test"; `split` is ignored for .npy).
std::unique_ptr<RegionFeatures> open_region_features(const std::string& path, const std::string& split);

// Answer priors that need no image, to show how much a data set can be solved from the question alone.
//   majority:  always answer the most frequent training answer
//   oracle:    answer the most frequent training answer of the same question text (unseen text -> majority);
//              an upper bound for any question-only model with that training set
// Accuracies are exact-match against `answer` on `test`, overall and per question type (ties: smallest string).
struct AnswerBaselines {
  struct PerType {
    std::string qtype;
    int count = 0;
    double majority = 0, oracle = 0;
  };
  std::string majority_answer;
  double majority = 0, oracle = 0;
  int test_count = 0;
  std::vector<PerType> per_type;  // sorted by qtype
};
AnswerBaselines answer_baselines(const std::vector<VqaQuestion>& train, const std::vector<VqaQuestion>& test);

// Small TSV helpers shared by the data readers.
std::vector<std::string_view> split_fields(std::string_view line, char sep);
// A decimal integer 0 <= v < limit with nothing else around it, else InputError "FILE:LINE: bad <what> '<text>'".
int64_t parse_index(std::string_view text, int64_t limit, const std::string& path, long line, const char* what);
// "a<sep>b<sep>c" with each item formatted by fmt's "{}" (fmt::join trips a GCC 12 -Wstringop-overflow false alarm).
template <class Range>
std::string join_fields(const Range& items, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += sep;
    first = false;
    out += fmt::format("{}", item);
  }
  return out;
}

}  // namespace lava
