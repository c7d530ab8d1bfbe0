#include "data/scenes.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"
#include "data/scene_captions.hpp"
#include "data/scenes_detail.hpp"
#include "data/vocab.hpp"

namespace lava {

namespace {

using namespace scenes_detail;

constexpr std::string_view kFormat = "lava-scenes-1";
constexpr std::array<std::string_view, 3> kSplits = {"train", "valid", "test"};

void write_tsv_lines(const std::string& path, const std::string& header, const std::vector<std::string>& lines) {
  std::string text = header;
  for (const std::string& l : lines) text += l + "\n";
  write_file_atomic(path, text);
}

// answer<TAB>count, most frequent first, ties by answer (std::map order + stable sort).
std::vector<std::string> vocab_lines(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> lines;
  for (const auto& [token, n] : v) lines.push_back(fmt::format("{}\t{}", token, n));
  return lines;
}

void check_options(const ScenesOptions& o) {
  if (o.out_dir.empty()) throw UsageError("scenes: --out is required");
  auto in_range = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
  if (!in_range(o.train_scenes, 1, 10'000'000) || !in_range(o.valid_scenes, 0, 10'000'000) ||
      !in_range(o.test_scenes, 0, 10'000'000))
    throw UsageError("scenes: scene counts must be 1..1e7 (train) and 0..1e7 (valid, test)");
  if (!in_range(o.questions_per_scene, 1, 20)) throw UsageError("scenes: questions per scene must be 1..20");
  if (o.pool < 1 || 28 % o.pool != 0) throw UsageError("scenes: pool must divide 28 (1, 2, 4, 7, 14, 28)");
}

std::map<std::string, std::pair<std::string, long>> read_meta(const std::string& path) {
  std::map<std::string, std::pair<std::string, long>> meta;  // key -> (value, line)
  std::string text = read_file(path, kTextDataLimit);
  long lineno = 0;
  for (std::string_view line : split_fields(text, '\n')) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> f = split_fields(line, '\t');
    if (f.size() != 2) throw input_error(path, lineno, "expected key<TAB>value");
    meta[std::string(f[0])] = {std::string(f[1]), lineno};
  }
  return meta;
}

}  // namespace

std::string_view fashion_class_name(int c) { return kClassNames.at(size_t(c)); }
std::string_view fashion_class_plural(int c) { return kClassPlurals.at(size_t(c)); }
std::string_view grid_position_name(int r) { return kPositionNames.at(size_t(r)); }

std::vector<Scene> compose_scenes(const std::array<std::vector<int32_t>, kFashionClasses>& pools, int count,
                                  uint64_t seed, std::string_view split) {
  for (const auto& p : pools) LAVA_CHECK(!p.empty(), "empty class pool for split {}", split);
  std::vector<Scene> scenes(size_t(std::max(count, 0)));
  for (int i = 0; i < count; ++i) {
    Draws d = scene_stream(seed, "compose", split, uint64_t(i));
    // k distinct classes by a partial Fisher-Yates shuffle of 0..9
    int k = 3 + d.below(4);
    std::array<int, kFashionClasses> order;
    for (int c = 0; c < kFashionClasses; ++c) order[size_t(c)] = c;
    for (int j = 0; j < k; ++j) std::swap(order[size_t(j)], order[size_t(j + d.below(kFashionClasses - j))]);
    // every chosen class once, the other 9 - k cells uniform over the chosen classes, then shuffle the cells
    Scene& s = scenes[size_t(i)];
    for (int r = 0; r < kSceneRegions; ++r) s.label[size_t(r)] = uint8_t(order[size_t(r < k ? r : d.below(k))]);
    for (int r = kSceneRegions - 1; r > 0; --r) std::swap(s.label[size_t(r)], s.label[size_t(d.below(r + 1))]);
    // an image per cell; a few redraws keep images distinct within the scene whenever the pool allows
    for (int r = 0; r < kSceneRegions; ++r) {
      const std::vector<int32_t>& pool = pools[s.label[size_t(r)]];
      int32_t img = pool[size_t(d.below(int(pool.size())))];
      for (int attempt = 0; attempt < 16 && std::find(s.image.begin(), s.image.begin() + r, img) != s.image.begin() + r;
           ++attempt)
        img = pool[size_t(d.below(int(pool.size())))];
      s.image[size_t(r)] = img;
    }
  }
  return scenes;
}

ScenesReport build_scenes(const ScenesOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  check_options(o);
  const std::string& m = o.mnist_dir;
  IdxImages train_images = read_idx_images(m + "/train-images-idx3-ubyte.gz");
  std::vector<uint8_t> train_labels = read_idx_labels(m + "/train-labels-idx1-ubyte.gz");
  std::vector<uint8_t> test_labels = read_idx_labels(m + "/t10k-labels-idx1-ubyte.gz");
  IdxImages test_images = read_idx_images(m + "/t10k-images-idx3-ubyte.gz");
  for (const IdxImages* im : {&train_images, &test_images})
    if (im->rows != 28 || im->cols != 28)
      throw input_error(m, 0, fmt::format("images are {}x{}, expected 28x28", im->rows, im->cols));
  if (size_t(train_images.count) != train_labels.size() || size_t(test_images.count) != test_labels.size())
    throw input_error(m, 0, "image and label files disagree on the number of items");

  // Per-class pools; the valid split holds out a seeded random share of each class's training images.
  std::array<std::array<std::vector<int32_t>, kFashionClasses>, 3> pools;
  for (size_t i = 0; i < train_labels.size(); ++i) {
    if (train_labels[i] >= kFashionClasses) throw input_error(m + "/train-labels-idx1-ubyte.gz", 0, "label > 9");
    pools[0][train_labels[i]].push_back(int32_t(i));
  }
  for (size_t i = 0; i < test_labels.size(); ++i) {
    if (test_labels[i] >= kFashionClasses) throw input_error(m + "/t10k-labels-idx1-ubyte.gz", 0, "label > 9");
    pools[2][test_labels[i]].push_back(int32_t(i));
  }
  for (int c = 0; c < kFashionClasses; ++c) {
    std::vector<int32_t>& all = pools[0][size_t(c)];
    Draws d = scene_stream(o.seed, "holdout", "valid", uint64_t(c));
    for (int j = int(all.size()) - 1; j > 0; --j) std::swap(all[size_t(j)], all[size_t(d.below(j + 1))]);
    int64_t total = int64_t(o.train_scenes) + o.valid_scenes;
    size_t hold = size_t((int64_t(all.size()) * o.valid_scenes + total / 2) / total);
    if (o.valid_scenes > 0) hold = std::max<size_t>(hold, 1);
    if (all.size() <= hold || (o.test_scenes > 0 && pools[2][size_t(c)].empty()))
      throw input_error(m, 0, fmt::format("too few images of class {} to fill every split", kClassNames[size_t(c)]));
    pools[1][size_t(c)].assign(all.begin(), all.begin() + long(hold));
    all.erase(all.begin(), all.begin() + long(hold));
  }

  std::error_code mkdir_error;
  std::filesystem::create_directories(o.out_dir, mkdir_error);
  if (mkdir_error) throw input_error(o.out_dir, 0, fmt::format("cannot create directory: {}", mkdir_error.message()));
  const int counts[3] = {o.train_scenes, o.valid_scenes, o.test_scenes};
  const char* sources[3] = {"train", "train", "t10k"};
  ScenesReport report;
  std::vector<VqaQuestion> questions[3];
  for (int s = 0; s < 3; ++s) {
    std::vector<Scene> scenes = counts[s] > 0 ? compose_scenes(pools[size_t(s)], counts[s], o.seed, kSplits[size_t(s)])
                                              : std::vector<Scene>{};
    questions[s] = ask_scene_questions(scenes, o.questions_per_scene, o.seed, kSplits[size_t(s)], o.mix);
    std::vector<std::string> lines;
    for (size_t i = 0; i < scenes.size(); ++i)
      lines.push_back(
          fmt::format("{}\t{}\t{}", i, join_fields(scenes[i].image, ","), join_fields(scenes[i].label, ",")));
    std::string base = fmt::format("{}/{}", o.out_dir, kSplits[size_t(s)]);
    write_tsv_lines(base + ".scenes.tsv",
                    fmt::format("# scene\timages (indices into {}-images-idx3-ubyte.gz; cells 0..8 row-major)\tlabels\n",
                                sources[s]),
                    lines);
    write_vqa_questions(base + ".questions.tsv", questions[s]);
    const std::vector<SceneCaptions> captions = caption_scenes(scenes, o.seed, kSplits[size_t(s)]);
    write_scene_captions(base + ".captions.tsv", captions);
    for (const SceneCaptions& c : captions) report.captions[s] += int(c.refs.size());
    report.scenes[s] = int(scenes.size());
    report.questions[s] = int(questions[s].size());
  }

  std::map<std::string, int> answers;
  TokenCounter words;
  for (const VqaQuestion& q : questions[0]) {
    ++answers[q.answer];
    for (const std::string& w : q.words) words.add(w);
  }
  write_tsv_lines(o.out_dir + "/answers.tsv", "", vocab_lines(answers));
  Vocab word_vocab = Vocab::build(words, VocabOptions{});
  word_vocab.save(o.out_dir + "/words.vocab");
  report.answer_vocab = int(answers.size());
  report.word_vocab = word_vocab.size();
  report.baselines = answer_baselines(questions[0], questions[2]);
  report.grammar_captions = grammar_caption_count();

  std::vector<std::string> meta = {
      fmt::format("format\t{}", kFormat), fmt::format("mnist_dir\t{}", o.mnist_dir), fmt::format("seed\t{}", o.seed),
      fmt::format("pool\t{}", o.pool), fmt::format("position_features\t{}", int(o.position_features)),
      fmt::format("questions_per_scene\t{}", o.questions_per_scene),
      fmt::format("question_mix\t{}", question_mix_name(o.mix))};
  for (int s = 0; s < 3; ++s) {
    meta.push_back(fmt::format("{}_scenes\t{}", kSplits[size_t(s)], report.scenes[s]));
    meta.push_back(fmt::format("{}_source\t{}", kSplits[size_t(s)], sources[s]));
  }
  meta.push_back(fmt::format("test_majority_answer\t{}", report.baselines.majority_answer));
  meta.push_back(fmt::format("test_majority_accuracy\t{:.4f}", report.baselines.majority));
  meta.push_back(fmt::format("test_question_only_oracle\t{:.4f}", report.baselines.oracle));
  write_tsv_lines(o.out_dir + "/meta.tsv", "# Fashion-MNIST scenes written by `lava data scenes`\n", meta);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

SceneSet SceneSet::load(const std::string& dir, const std::string& split, const std::string& mnist_dir) {
  if (std::find(kSplits.begin(), kSplits.end(), split) == kSplits.end())
    throw UsageError(fmt::format("unknown scene split {} (train, valid, test)", quote_input(split)));
  const std::string meta_path = dir + "/meta.tsv";
  auto meta = read_meta(meta_path);
  auto value = [&](const std::string& key) -> const std::pair<std::string, long>& {
    auto it = meta.find(key);
    if (it == meta.end()) throw input_error(meta_path, 0, fmt::format("missing key '{}'", key));
    return it->second;
  };
  if (value("format").first != kFormat)
    throw input_error(meta_path, value("format").second, fmt::format("format is not {}", kFormat));
  SceneSet set;
  set.pool_ = int(parse_index(value("pool").first, 29, meta_path, value("pool").second, "pool"));
  if (set.pool_ < 1 || 28 % set.pool_ != 0) throw input_error(meta_path, value("pool").second, "pool must divide 28");
  set.position_features_ = parse_index(value("position_features").first, 2, meta_path,
                                       value("position_features").second, "position_features") == 1;
  const auto& source = value(split + "_source");
  if (source.first != "train" && source.first != "t10k")
    throw input_error(meta_path, source.second, "source must be train or t10k");
  int64_t count = parse_index(value(split + "_scenes").first, int64_t(1) << 30, meta_path,
                              value(split + "_scenes").second, "scene count");

  std::string images_dir = mnist_dir.empty() ? value("mnist_dir").first : mnist_dir;
  std::string labels_path = fmt::format("{}/{}-labels-idx1-ubyte.gz", images_dir, source.first);
  set.images_ = read_idx_images(fmt::format("{}/{}-images-idx3-ubyte.gz", images_dir, source.first));
  std::vector<uint8_t> labels = read_idx_labels(labels_path);
  if (set.images_.rows != 28 || set.images_.cols != 28 || size_t(set.images_.count) != labels.size())
    throw input_error(labels_path, 0, "images are not 28x28 or do not match the labels");

  const std::string path = fmt::format("{}/{}.scenes.tsv", dir, split);
  std::string text = read_file(path, kTextDataLimit);
  long lineno = 0;
  for (std::string_view line : split_fields(text, '\n')) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> f = split_fields(line, '\t');
    if (f.size() != 3) throw input_error(path, lineno, "expected scene<TAB>images<TAB>labels");
    if (parse_index(f[0], count, path, lineno, "scene index") != int64_t(set.scenes_.size()))
      throw input_error(path, lineno, "scene indices must count up from 0");
    std::vector<std::string_view> im = split_fields(f[1], ','), lb = split_fields(f[2], ',');
    if (im.size() != kSceneRegions || lb.size() != kSceneRegions)
      throw input_error(path, lineno, "a scene needs 9 images and 9 labels");
    Scene s;
    for (int r = 0; r < kSceneRegions; ++r) {
      s.image[size_t(r)] = int32_t(parse_index(im[size_t(r)], set.images_.count, path, lineno, "image index"));
      s.label[size_t(r)] = uint8_t(parse_index(lb[size_t(r)], kFashionClasses, path, lineno, "label"));
      if (labels[size_t(s.image[size_t(r)])] != s.label[size_t(r)])
        throw input_error(path, lineno, fmt::format("cell {} says class {} but image {} is class {} in {}", r,
                                                    s.label[size_t(r)], s.image[size_t(r)],
                                                    labels[size_t(s.image[size_t(r)])], labels_path));
    }
    set.scenes_.push_back(s);
  }
  if (int64_t(set.scenes_.size()) != count)
    throw input_error(path, 0, fmt::format("{} scenes, meta.tsv says {}", set.scenes_.size(), count));
  return set;
}

int SceneSet::dim() const {
  int side = 28 / pool_;
  return side * side + (position_features_ ? 2 * kSceneGrid : 0);
}

void SceneSet::get(int scene, float* out) const {
  // out[r, y*side + x] = (1 / (255 p^2)) * sum_{dy,dx < p} image_r[(y p + dy) * 28 + x p + dx]
  // out[r, side^2 + row(r)] = out[r, side^2 + 3 + col(r)] = 1 (position one-hots), all else 0.
  // out: (9, dim)
  LAVA_CHECK(scene >= 0 && scene < num_images(), "scene {} of {}", scene, num_images());
  const int p = pool_, side = 28 / p, d = dim();
  const float scale = 1.0f / (255.0f * float(p * p));
  for (int r = 0; r < kSceneRegions; ++r) {
    const uint8_t* img = images_.image(scenes_[size_t(scene)].image[size_t(r)]);  // (28, 28)
    float* o = out + size_t(r) * size_t(d);                                        // (d)
    for (int y = 0; y < side; ++y) {
      int sum[28] = {};  // (side) pool sums of output row y
      for (int dy = 0; dy < p; ++dy) {
        const uint8_t* row = img + (y * p + dy) * 28;
        for (int x = 0; x < side; ++x)
          for (int dx = 0; dx < p; ++dx) sum[x] += row[x * p + dx];
      }
      for (int x = 0; x < side; ++x) o[y * side + x] = float(sum[x]) * scale;
    }
    if (position_features_) {
      std::fill(o + side * side, o + d, 0.0f);
      o[side * side + r / kSceneGrid] = 1.0f;
      o[side * side + kSceneGrid + r % kSceneGrid] = 1.0f;
    }
  }
}

}  // namespace lava
