#pragma once
// VQA-style scenes from Fashion-MNIST (data-notes.md, "VQA-style"): a 3x3 grid of clothing items, 9 regions,
// and questions whose answers need the image.
//
// A scene holds 3 to 6 distinct classes, each at least once (the 9 - k extra cells draw uniformly from the k
// classes), then the cells are shuffled. Cell r sits at row r / 3, column r % 3 (row 0 = top, column 0 = left).
// Questions (qtype: example -> answer; annotated regions):
//   what_at   "what is at the top left ?" -> class;                  the cell asked about
//   where     "where is the bag ?" -> "top left", ...;               the bag's cell (only if the bag is unique)
//   left_of / right_of / above / below
//             "what is left of the bag ?" -> class of that neighbour; the neighbour's cell (bag unique, neighbour exists)
//   how_many  "how many bags are there ?" -> "1".."7";               every cell holding a bag (bags present)
//   is_there  "is there a bag ?" -> "yes" / "no" (a fair coin);      every bag's cell for "yes", none for "no"
//   is_at     "is there a bag at the top left ?" -> "yes" / "no" (a fair coin; "no" names one of the 9 classes
//             the cell does not hold, uniformly);                    the cell asked about (--mix vqa2 only)
// The question mix (ScenesOptions::mix, `lava data scenes --mix`):
//   default  each question draws its family (what_at, where, relation, how_many, is_there) uniformly among the
//            families the scene allows: about 20 % yes/no, 20 % number and 60 % other.
//   vqa2     VQA 2.0's answer-type mix (Goyal et al. 2017: 38 % yes/no, 12 % number, 50 % other): the answer type
//            first (yes/no 38 %, number 12 %, other 50 %), then a family within it uniformly among those the scene
//            allows: yes/no = is_there or is_at, number = how_many, other = what_at, where or relation.
// Then a question uniformly within the family; a scene never repeats a question. default redraws a repeat from
// the family draw on; vqa2 redraws it within its answer type, so the type shares stay at 38/12/50 (measured on
// 100k train questions: 37.8/12.0/50.2 %, tests/data/test_scenes.cpp).
//
// Splits: train scenes draw from the 60k training images minus a per-class held-out share, which only the valid
// scenes use (disjoint images, valid fraction = valid_scenes / (train_scenes + valid_scenes)); test scenes draw
// from the 10k t10k images. Everything is a function of the seed (core/rng.hpp counter streams, one per scene).
//
// Output directory (all TSV, atomically written; the 1.4 GB of features are recomputed from the images instead):
//   meta.tsv                key<TAB>value: format, mnist_dir, seed, pool, position_features, question_mix, scene
//                           counts
//   {train,valid,test}.scenes.tsv     scene<TAB>9 image indices (cells 0..8)<TAB>9 class labels
//   {train,valid,test}.questions.tsv  the questions format of vqa_questions.hpp; image = scene index in the split
//   {train,valid,test}.captions.tsv   2 to 5 reference captions per scene, item words tagged with their region
//                                     (data/scene_captions.hpp)
//   answers.tsv             answer<TAB>count over the train questions, most frequent first (line k = answer id k)
//   words.vocab             the question words of the train split as a data/vocab.hpp Vocab (Vocab::load)
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/idx_reader.hpp"
#include "data/vqa_questions.hpp"

namespace lava {

constexpr int kSceneGrid = 3;
constexpr int kSceneRegions = kSceneGrid * kSceneGrid;
constexpr int kFashionClasses = 10;

std::string_view fashion_class_name(int c);    // "t-shirt", "trouser", ..., "ankle boot"
std::string_view fashion_class_plural(int c);  // "t-shirts", ..., "ankle boots"
std::string_view grid_position_name(int r);    // "top left", "top middle", ..., "center", ..., "bottom right"

enum class QuestionMix : uint8_t { default_mix, vqa2 };
std::string_view question_mix_name(QuestionMix m);  // "default", "vqa2"

struct ScenesOptions {
  std::string out_dir;
  std::string mnist_dir = "/usr/share/datasets/fashion-mnist";
  uint64_t seed = 1;
  int train_scenes = 50000, valid_scenes = 5000, test_scenes = 10000;
  int questions_per_scene = 5;
  QuestionMix mix = QuestionMix::default_mix;
  int pool = 2;                   // p x p average pooling of each 28x28 item: 2 -> 14x14 = 196 pixel features
  bool position_features = true;  // append one-hot row (3) and column (3) of the cell: without them no model
                                  // that scores regions one by one could tell "top left" from "center"
};

struct Scene {
  std::array<int32_t, kSceneRegions> image{};  // index into the split's source image file
  std::array<uint8_t, kSceneRegions> label{};  // class of each cell
};

// pools[c]: the image indices of class c this split may use (each non-empty). `split` names the random stream.
std::vector<Scene> compose_scenes(const std::array<std::vector<int32_t>, kFashionClasses>& pools, int count,
                                  uint64_t seed, std::string_view split);
std::vector<VqaQuestion> ask_scene_questions(const std::vector<Scene>& scenes, int per_scene, uint64_t seed,
                                             std::string_view split, QuestionMix mix = QuestionMix::default_mix);

struct ScenesReport {
  int scenes[3] = {0, 0, 0};     // train, valid, test
  int questions[3] = {0, 0, 0};
  int captions[3] = {0, 0, 0};   // reference captions per split
  double grammar_captions = 0;   // distinct captions the caption grammar can produce
  int answer_vocab = 0, word_vocab = 0;  // distinct train answers; Vocab size (with its 4 control symbols)
  AnswerBaselines baselines;     // fitted on train, measured on test
  double seconds = 0;            // wall time of build_scenes
};

// Throws UsageError for bad options, InputError for bad or missing MNIST files.
ScenesReport build_scenes(const ScenesOptions& options);

// One split of a scene directory, with region features computed from the MNIST images on demand:
//   feature of region r = [ pooled pixels / 255 (pool = 2: 14 x 14, row-major) | one-hot row (3) | one-hot col (3) ]
// so dim() = (28 / pool)^2 + 6 (202 for pool 2), or (28 / pool)^2 without position features.
class SceneSet final : public RegionFeatures {
 public:
  // `mnist_dir` overrides the directory recorded in meta.tsv. Checks every index and label against the images.
  static SceneSet load(const std::string& dir, const std::string& split, const std::string& mnist_dir = "");

  int num_images() const override { return int(scenes_.size()); }
  int num_regions() const override { return kSceneRegions; }
  int dim() const override;
  void get(int scene, float* out) const override;  // out: (9, dim)

  int feature_dim() const { return dim(); }
  void region_features(int scene, float* out) const { get(scene, out); }
  const std::vector<Scene>& scenes() const { return scenes_; }

 private:
  std::vector<Scene> scenes_;
  IdxImages images_;
  int pool_ = 2;
  bool position_features_ = true;
};

}  // namespace lava
