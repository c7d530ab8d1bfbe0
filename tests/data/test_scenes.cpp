// The Fashion-MNIST scenes: composition, question answers recomputed from the grid, annotated
// regions, yes/no balance, determinism, the written directory and SceneSet's on-the-fly features.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "data/idx_reader.hpp"
#include "data/scenes.hpp"
#include "data/vocab.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/fake_mnist.hpp"
#include "support/skip_unless.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

std::array<std::vector<int32_t>, kFashionClasses> synthetic_pools(int per_class) {
  std::array<std::vector<int32_t>, kFashionClasses> pools;
  for (int c = 0; c < kFashionClasses; ++c)
    for (int j = 0; j < per_class; ++j) pools[size_t(c)].push_back(int32_t(c * 1000 + j));
  return pools;
}

std::string text_of(const std::vector<std::string>& words, size_t from, size_t to) {  // words[from, to) joined
  std::string s;
  for (size_t i = from; i < to; ++i) s += (i > from ? " " : "") + words[i];
  return s;
}

int class_of(const std::string& name, bool plural) {
  for (int c = 0; c < kFashionClasses; ++c)
    if ((plural ? fashion_class_plural(c) : fashion_class_name(c)) == name) return c;
  FAIL("unknown class name '" << name << "'");
  return -1;
}

int position_of(const std::string& name) {
  for (int r = 0; r < kSceneRegions; ++r)
    if (grid_position_name(r) == name) return r;
  FAIL("unknown position '" << name << "'");
  return -1;
}

// Recomputes a question's answer and annotated regions from the scene grid alone, parsing the question text.
void check_against_grid(const VqaQuestion& q, const Scene& s) {
  const std::vector<std::string>& w = q.words;
  INFO(text_of(w, 0, w.size()), " -> ", q.answer);
  REQUIRE(w.size() >= 4);
  std::vector<int> cells_of[kFashionClasses];
  for (int r = 0; r < kSceneRegions; ++r) cells_of[s.label[size_t(r)]].push_back(r);
  std::string answer;
  std::vector<int> regions;
  if (q.qtype == "what_at") {  // what is at the <position> ?
    int r = position_of(text_of(w, 4, w.size() - 1));
    answer = fashion_class_name(s.label[size_t(r)]);
    regions = {r};
  } else if (q.qtype == "where") {  // where is the <class> ?
    int c = class_of(text_of(w, 3, w.size() - 1), false);
    REQUIRE(cells_of[c].size() == 1);
    answer = grid_position_name(cells_of[c][0]);
    regions = cells_of[c];
  } else if (q.qtype == "left_of" || q.qtype == "right_of" || q.qtype == "above" || q.qtype == "below") {
    size_t the = size_t(std::find(w.begin(), w.end(), "the") - w.begin());  // what is left of the <class> ?
    int c = class_of(text_of(w, the + 1, w.size() - 1), false);
    REQUIRE(cells_of[c].size() == 1);
    int row = cells_of[c][0] / 3, col = cells_of[c][0] % 3;
    std::string phrase = text_of(w, 2, the);
    if (q.qtype == "left_of") --col, phrase += "|left of";
    if (q.qtype == "right_of") ++col, phrase += "|right of";
    if (q.qtype == "above") --row, phrase += "|above";
    if (q.qtype == "below") ++row, phrase += "|below";
    CHECK(phrase.substr(0, phrase.find('|')) == phrase.substr(phrase.find('|') + 1));
    REQUIRE((row >= 0 && row < 3 && col >= 0 && col < 3));
    answer = fashion_class_name(s.label[size_t(row * 3 + col)]);
    regions = {row * 3 + col};
  } else if (q.qtype == "how_many") {  // how many <plural> are there ?
    int c = class_of(text_of(w, 2, w.size() - 3), true);
    REQUIRE(!cells_of[c].empty());
    answer = std::to_string(cells_of[c].size());
    regions = cells_of[c];
  } else if (q.qtype == "is_there") {  // is there a/an <class> ?
    int c = class_of(text_of(w, 3, w.size() - 1), false);
    CHECK(w[2] == (fashion_class_name(c)[0] == 'a' ? "an" : "a"));
    answer = cells_of[c].empty() ? "no" : "yes";
    regions = cells_of[c];
  } else if (q.qtype == "is_at") {  // is there a/an <class> at the <position> ?
    size_t at = size_t(std::find(w.begin() + 3, w.end(), "at") - w.begin());
    REQUIRE(at + 2 < w.size());
    CHECK(w[at + 1] == "the");
    int c = class_of(text_of(w, 3, at), false), r = position_of(text_of(w, at + 2, w.size() - 1));
    CHECK(w[2] == (fashion_class_name(c)[0] == 'a' ? "an" : "a"));
    answer = s.label[size_t(r)] == c ? "yes" : "no";
    regions = {r};
  } else {
    FAIL("unknown qtype " << q.qtype);
  }
  CHECK(q.answer == answer);
  CHECK(q.regions == regions);
}

}  // namespace

TEST_CASE("scenes: composition invariants and determinism") {
  auto pools = synthetic_pools(40);
  std::vector<Scene> a = compose_scenes(pools, 300, 7, "train");
  std::vector<Scene> b = compose_scenes(pools, 300, 7, "train");
  std::vector<Scene> c = compose_scenes(pools, 300, 8, "train");
  std::vector<Scene> d = compose_scenes(pools, 300, 7, "test");
  REQUIRE(a.size() == 300);
  int same_b = 0, same_c = 0, same_d = 0;
  int k_seen[10] = {};
  for (size_t i = 0; i < a.size(); ++i) {
    same_b += a[i].image == b[i].image && a[i].label == b[i].label;
    same_c += a[i].image == c[i].image;
    same_d += a[i].image == d[i].image;
    std::set<int> classes(a[i].label.begin(), a[i].label.end());
    CHECK(classes.size() >= 3);
    CHECK(classes.size() <= 6);
    ++k_seen[classes.size()];
    std::set<int32_t> images(a[i].image.begin(), a[i].image.end());
    CHECK(images.size() == 9);  // distinct images within a scene
    for (int r = 0; r < kSceneRegions; ++r) CHECK(a[i].image[size_t(r)] / 1000 == a[i].label[size_t(r)]);
  }
  CHECK(same_b == 300);
  CHECK(same_c < 3);
  CHECK(same_d < 3);
  for (int k = 3; k <= 6; ++k) CHECK(k_seen[k] > 40);  // each class count is drawn, roughly 75 times each

  std::vector<VqaQuestion> qa = ask_scene_questions(a, 5, 7, "train"), qb = ask_scene_questions(a, 5, 7, "train");
  REQUIRE(qa.size() == qb.size());
  for (size_t i = 0; i < qa.size(); ++i) CHECK((qa[i].words == qb[i].words && qa[i].answer == qb[i].answer));
}

TEST_CASE("scenes: every answer and annotated region follows from the grid; yes/no is balanced") {
  auto pools = synthetic_pools(20);
  std::vector<Scene> scenes = compose_scenes(pools, 2000, 3, "train");
  std::vector<VqaQuestion> qs = ask_scene_questions(scenes, 5, 3, "train");
  CHECK(qs.size() == 5 * scenes.size());
  std::map<std::string, int> per_type;
  int yes = 0, no = 0;
  std::set<std::pair<int, std::vector<std::string>>> seen;
  for (const VqaQuestion& q : qs) {
    REQUIRE(q.image >= 0);
    REQUIRE(q.image < int(scenes.size()));
    check_against_grid(q, scenes[size_t(q.image)]);
    ++per_type[q.qtype];
    yes += q.answer == "yes";
    no += q.answer == "no";
    CHECK(seen.insert({q.image, q.words}).second);  // no scene repeats a question
  }
  for (const char* t : {"what_at", "where", "left_of", "right_of", "above", "below", "how_many", "is_there"})
    CHECK(per_type[t] > 100);
  double yes_share = double(yes) / double(yes + no);
  CAPTURE(yes);
  CAPTURE(no);
  CHECK(yes + no == per_type["is_there"]);
  CHECK(yes_share > 0.46);
  CHECK(yes_share < 0.54);
}

TEST_CASE("scenes: --mix vqa2 gives VQA 2.0's answer types (38/12/50 %), balanced yes/no, is_at one region") {
  auto pools = synthetic_pools(20);
  std::vector<Scene> scenes = compose_scenes(pools, 2000, 3, "train");
  const std::vector<VqaQuestion> qs = ask_scene_questions(scenes, 5, 3, "train", QuestionMix::vqa2);
  CHECK(qs.size() == 5 * scenes.size());
  std::map<std::string, int> per_type, yes;
  std::set<std::pair<int, std::vector<std::string>>> seen;
  for (const VqaQuestion& q : qs) {
    check_against_grid(q, scenes[size_t(q.image)]);
    ++per_type[q.qtype];
    yes[q.qtype] += q.answer == "yes";
    CHECK(seen.insert({q.image, q.words}).second);  // no scene repeats a question
  }
  for (const char* t : {"what_at", "where", "left_of", "right_of", "above", "below", "how_many", "is_there", "is_at"})
    CHECK(per_type[t] > 100);
  const double n = double(qs.size());
  const double yes_no = (per_type["is_there"] + per_type["is_at"]) / n, number = per_type["how_many"] / n;
  CAPTURE(yes_no);
  CAPTURE(number);
  // 10,000 questions: one standard error is 0.5 points for 38 %, 0.3 for 12 %; the bounds are 3 of them.
  CHECK(std::abs(yes_no - 0.38) < 0.015);
  CHECK(std::abs(number - 0.12) < 0.01);
  CHECK(std::abs(1 - yes_no - number - 0.50) < 0.015);
  for (const char* t : {"is_there", "is_at"}) {
    CAPTURE(t);
    const double share = double(yes[t]) / per_type[t];
    CHECK(share > 0.46);
    CHECK(share < 0.54);
  }
  // The default mix is unchanged: no is_at, and every family about equally often (is_there ~ how_many).
  const std::vector<VqaQuestion> d = ask_scene_questions(scenes, 5, 3, "train");
  std::map<std::string, int> default_types;
  for (const VqaQuestion& q : d) ++default_types[q.qtype];
  CHECK(default_types.count("is_at") == 0);
  CHECK(std::abs(default_types["is_there"] - default_types["how_many"]) < 0.05 * double(d.size()));
}

TEST_CASE("scenes cli: --mix is written to meta.tsv; a bad --mix is a usage error naming the option") {
  const CliResult bad = run_lava("data scenes --out " + temp_path("mix") + " --mix vqa3");
  CHECK(bad.code == 2);
  CHECK(bad.err_lines() == 1);
  CHECK(bad.err.find("--mix") != std::string::npos);
  CHECK(bad.err.find("vqa3") != std::string::npos);
  CHECK(bad.out.empty());
  CHECK_FALSE(std::filesystem::exists(temp_path("mix")));
  const CliResult help = run_lava("data scenes --help");
  CHECK(help.code == 0);
  CHECK(help.out.find("--mix") != std::string::npos);
}

TEST_CASE("scenes: build_scenes writes a directory SceneSet reads back, deterministically") {
  TempDir dir("build");
  const std::string mnist = dir.file("mnist");
  std::filesystem::create_directories(mnist);
  write_fake_mnist(mnist, 400, 150);
  ScenesOptions o;
  o.out_dir = dir.file("out");
  o.mnist_dir = mnist;
  o.seed = 5;
  o.train_scenes = 40;
  o.valid_scenes = 8;
  o.test_scenes = 12;
  ScenesReport rep = build_scenes(o);
  CHECK(rep.scenes[0] == 40);
  CHECK(rep.questions[2] == 60);
  CHECK(rep.answer_vocab > 10);
  CHECK(Vocab::load(o.out_dir + "/words.vocab").id("sneaker") >= Vocab::kNumSpecial);

  const char* files[] = {"meta.tsv", "train.scenes.tsv", "valid.scenes.tsv", "test.scenes.tsv", "train.questions.tsv",
                         "valid.questions.tsv", "test.questions.tsv", "answers.tsv", "words.vocab"};
  std::vector<std::string> first;
  for (const char* f : files) first.push_back(read_file(o.out_dir + "/" + f));
  build_scenes(o);
  for (size_t i = 0; i < std::size(files); ++i) CHECK(read_file(o.out_dir + "/" + files[i]) == first[i]);
  CHECK(first[0].find("question_mix\tdefault\n") != std::string::npos);
  o.mix = QuestionMix::vqa2;
  o.out_dir = dir.file("out-vqa2");
  build_scenes(o);
  CHECK(read_file(o.out_dir + "/meta.tsv").find("question_mix\tvqa2\n") != std::string::npos);
  CHECK(read_file(o.out_dir + "/test.questions.tsv").find("\tis_at\t") != std::string::npos);
  o.mix = QuestionMix::default_mix;
  o.seed = 6;
  o.out_dir = dir.file("out6");
  build_scenes(o);
  CHECK(read_file(o.out_dir + "/train.scenes.tsv") != first[1]);
  o.out_dir = dir.file("out");

  SceneSet train = SceneSet::load(o.out_dir, "train"), valid = SceneSet::load(o.out_dir, "valid");
  SceneSet test = SceneSet::load(o.out_dir, "test");
  CHECK(train.num_images() == 40);
  CHECK(valid.num_images() == 8);
  CHECK(test.num_images() == 12);
  CHECK(train.num_regions() == 9);
  CHECK(train.feature_dim() == 14 * 14 + 6);
  std::set<int32_t> train_images, valid_images;  // valid scenes use held-out training images only
  for (const Scene& s : train.scenes()) train_images.insert(s.image.begin(), s.image.end());
  for (const Scene& s : valid.scenes()) valid_images.insert(s.image.begin(), s.image.end());
  for (int32_t i : valid_images) CHECK(train_images.count(i) == 0);
  for (const Scene& s : test.scenes())
    for (int r = 0; r < 9; ++r) CHECK(s.label[size_t(r)] == (s.image[size_t(r)] * 3) % 10);

  // features: 2x2 means of the image in [0, 1], then one-hot row and column
  std::vector<float> f(size_t(9 * test.dim()));
  test.region_features(11, f.data());
  const Scene& s = test.scenes()[11];
  for (int r = 0; r < 9; ++r) {
    const float* o_r = f.data() + r * test.dim();
    int img = s.image[size_t(r)];
    for (int y = 0; y < 14; y += 5)
      for (int x = 0; x < 14; x += 3) {
        int sum = fake_pixel(img, 2 * y, 2 * x) + fake_pixel(img, 2 * y, 2 * x + 1) + fake_pixel(img, 2 * y + 1, 2 * x) +
                  fake_pixel(img, 2 * y + 1, 2 * x + 1);
        CHECK(o_r[y * 14 + x] == doctest::Approx(sum / (4.0 * 255.0)));
      }
    CHECK(*std::min_element(o_r, o_r + test.dim()) >= 0.0f);
    CHECK(*std::max_element(o_r, o_r + test.dim()) <= 1.0f);
    for (int j = 0; j < 6; ++j) CHECK(o_r[196 + j] == float(j == r / 3 || j == 3 + r % 3));
  }

  // the written questions parse with the generic reader and match the grid
  std::vector<VqaQuestion> qs = read_vqa_questions(o.out_dir + "/test.questions.tsv", test.num_images(), 9);
  REQUIRE(qs.size() == 60);
  for (const VqaQuestion& q : qs) check_against_grid(q, test.scenes()[size_t(q.image)]);
  CHECK(open_region_features(o.out_dir, "valid")->num_images() == 8);

  // a scene file that disagrees with the labels (another MNIST copy) is rejected with file and line
  std::string scenes = read_file(o.out_dir + "/test.scenes.tsv");
  size_t tab = scenes.find('\t', scenes.find("\n0\t") + 3);
  scenes[tab + 1] = scenes[tab + 1] == '9' ? '8' : '9';
  write_file_atomic(o.out_dir + "/test.scenes.tsv", scenes);
  check_input_error([&] { SceneSet::load(o.out_dir, "test"); }, o.out_dir + "/test.scenes.tsv:2:", "class");
  check_input_error([&] { SceneSet::load(dir.file("nowhere"), "test"); }, dir.file("nowhere") + "/meta.tsv");
  CHECK_THROWS_AS(SceneSet::load(o.out_dir, "dev"), UsageError);
  o.pool = 3;
  CHECK_THROWS_AS(build_scenes(o), UsageError);
}

TEST_CASE("scenes: the installed Fashion-MNIST files read as documented" *
          skip_unless_exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz")) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  IdxImages im = read_idx_images(dir + "/t10k-images-idx3-ubyte.gz");
  std::vector<uint8_t> labels = read_idx_labels(dir + "/t10k-labels-idx1-ubyte.gz");
  CHECK(im.count == 10000);
  CHECK(im.rows == 28);
  CHECK(im.cols == 28);
  REQUIRE(labels.size() == 10000);
  int per_class[10] = {};
  for (uint8_t l : labels) {
    REQUIRE(l < 10);
    ++per_class[l];
  }
  for (int c = 0; c < 10; ++c) CHECK(per_class[c] == 1000);
  CHECK(read_idx_labels(dir + "/train-labels-idx1-ubyte.gz").size() == 60000);
}
