// The scenes' reference captions (data/scene_captions.hpp): every tagged item word names its region's class and
// every stated position and relation holds in the grid; references per scene; the grammar's count recomputed by
// brute force; the file round-trips; bad files are one InputError naming FILE:LINE; the CLI exits 1 on one.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "data/scene_captions.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/fake_mnist.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

std::vector<Scene> some_scenes(int n) {
  std::vector<Scene> scenes(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < kSceneRegions; ++r) scenes[size_t(i)].label[size_t(r)] = uint8_t((i * 7 + r * r * 3) % 10);
  return scenes;
}

// The cell a position phrase names ("top left" -> 0), or −1.
int cell_named(const std::string& phrase) {
  for (int r = 0; r < kSceneRegions; ++r)
    if (grid_position_name(r) == phrase) return r;
  return -1;
}

}  // namespace

TEST_CASE("captions: item words, positions and relations follow from the grid") {
  const std::vector<Scene> scenes = some_scenes(200);
  const std::vector<SceneCaptions> caps = caption_scenes(scenes, 3, "train");
  REQUIRE(caps.size() == scenes.size());
  std::set<int> counts;
  int relations = 0, position_first = 0;
  for (const SceneCaptions& sc : caps) {
    const Scene& s = scenes[size_t(sc.scene)];
    CHECK(int(sc.refs.size()) >= kMinCaptions);
    CHECK(int(sc.refs.size()) <= kMaxCaptions);
    counts.insert(int(sc.refs.size()));
    std::set<std::vector<std::string>> distinct;
    for (const Caption& c : sc.refs) {
      distinct.insert(c.words);
      REQUIRE(c.words.size() == c.region.size());
      // Every run of tagged words is the class name of its region; the words around it place it.
      for (size_t i = 0; i < c.words.size(); ++i) {
        if (c.region[i] < 0 || (i > 0 && c.region[i - 1] == c.region[i])) continue;
        const int r = c.region[i];
        const std::string name(fashion_class_name(s.label[size_t(r)]));
        std::string got = c.words[i];
        size_t j = i + 1;
        for (; j < c.words.size() && c.region[j] == r; ++j) got += " " + c.words[j];
        CHECK(got == name);
        // "a N at the P": P names r (one or two words before ",", "and", a relation or the end)
        if (j + 2 < c.words.size() && c.words[j] == "at" && c.words[j + 1] == "the") {
          const std::string one = c.words[j + 2];
          const std::string two = j + 3 < c.words.size() ? one + " " + c.words[j + 3] : "";
          CHECK((cell_named(two) == r || (cell_named(two) < 0 && cell_named(one) == r)));
        }
        // "the P holds a N": P is the words between that "the" and "holds"
        if (i >= 4 && c.words[i - 2] == "holds") {
          ++position_first;
          size_t k = i - 3;
          while (k > 0 && c.words[k] != "the") --k;
          std::string p;
          for (size_t m = k + 1; m + 2 < i; ++m) p += (p.empty() ? "" : " ") + c.words[m];
          CHECK(cell_named(p) == r);
        }
        // "... REL a N_s": N_s is the neighbour of the item named before REL
        if (i >= 3 && (c.words[i - 2] == "of" || c.words[i - 2] == "above" || c.words[i - 2] == "below")) {
          ++relations;
          int before = -1;
          for (size_t k = 0; k < i; ++k)
            if (c.region[k] >= 0) before = c.region[k];
          const int dr = r / 3 - before / 3, dc = r % 3 - before % 3;
          const std::string rel = c.words[i - 2] == "of" ? c.words[i - 3] : c.words[i - 2];
          CHECK(((rel == "left" && dr == 0 && dc == 1) || (rel == "right" && dr == 0 && dc == -1) ||
                 (rel == "above" && dr == 1 && dc == 0) || (rel == "below" && dr == -1 && dc == 0)));
        }
      }
    }
    CHECK(distinct.size() == sc.refs.size());
  }
  CHECK(counts == std::set<int>{2, 3, 4, 5});
  CHECK(relations > 50);
  CHECK(position_first > 50);
  CHECK(caption_scenes(scenes, 3, "train")[7].refs[0].words == caps[7].refs[0].words);  // a function of the seed
}

TEST_CASE("captions: the grammar's distinct-caption count, by brute force over clause shapes") {
  // A clause names one cell (2 forms x 10 classes) or an ordered pair of neighbours (10 x 10 classes); a caption is
  // 1 to 3 clauses on disjoint cells.
  struct Shape {
    int mask;
    double strings;
  };
  std::vector<Shape> shapes;
  for (int r = 0; r < 9; ++r) {
    shapes.push_back({1 << r, 20});
    for (int s = 0; s < 9; ++s)
      if (std::abs(r / 3 - s / 3) + std::abs(r % 3 - s % 3) == 1) shapes.push_back({(1 << r) | (1 << s), 100});
  }
  CHECK(shapes.size() == 9 + 24);
  double total = 0;
  for (const Shape& a : shapes) {
    total += a.strings;
    for (const Shape& b : shapes) {
      if (a.mask & b.mask) continue;
      total += a.strings * b.strings;
      for (const Shape& c : shapes)
        if (!((a.mask | b.mask) & c.mask)) total += a.strings * b.strings * c.strings;
    }
  }
  CHECK(grammar_caption_count() == doctest::Approx(total).epsilon(1e-12));
}

TEST_CASE("captions: the file round-trips, and bad files are one InputError naming FILE:LINE") {
  TempDir dir("captions");
  const std::vector<SceneCaptions> caps = caption_scenes(some_scenes(5), 1, "valid");
  const std::string path = dir.file("c.tsv");
  write_scene_captions(path, caps);
  const std::vector<SceneCaptions> back = read_scene_captions(path, 5);
  REQUIRE(back.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    REQUIRE(back[i].refs.size() == caps[i].refs.size());
    for (size_t k = 0; k < caps[i].refs.size(); ++k) {
      CHECK(back[i].refs[k].words == caps[i].refs[k].words);
      CHECK(back[i].refs[k].region == caps[i].refs[k].region);
    }
  }
  const std::string good = "# header\n0\ta bag@0 at the top left\tthe center holds a coat@4\n";
  struct Bad {
    std::string text, needle;
  };
  const Bad bad[] = {
      {good + "0\ta x\ta y\n", ":3: scene 0 where scene 1 was due"},
      {good + "2\ta x\ta y\n", ":3: scene index 2 out of range"},
      {good + "1\tonly one\n", ":3: 1 captions"},
      {good + "1\ta\tb\tc\td\te\tf\n", ":3: 6 captions"},
      {good + "1\ta bag@9\ta\n", ":3: region tag 9 out of range"},
      {good + "1\ta @3\ta\n", ":3: caption 1: a region tag without its word"},
      {good + "1\ta  bag\ta\n", ":3: caption 1 has an empty word"},
      {good + "1\ta\t\n", ":3: caption 2 is empty"},
      {good + "x\ta\tb\n", ":3: bad scene index 'x'"},
      {good, "1 scenes captioned, the split has 2"},
  };
  for (const Bad& b : bad) {
    write_file_atomic(path, b.text);
    check_input_error([&] { read_scene_captions(path, 2); }, path, b.needle);
  }
}

TEST_CASE("captions: lava data scenes writes them; lava train --task caption stops on a bad one with exit 1") {
  TempDir dir("captions_cli");
  const std::string mnist = dir.file("mnist"), out = dir.file("scenes");
  std::filesystem::create_directories(mnist);
  write_fake_mnist(mnist, 400, 150);
  const CliResult made = run_lava(fmt::format("data scenes --out {} --mnist {} --train 20 --valid 4 --test 4", out, mnist));
  REQUIRE(made.code == 0);
  CHECK(made.out.find("reference captions") != std::string::npos);
  CHECK(made.out.find("distinct captions") != std::string::npos);
  CHECK(read_scene_captions(out + "/train.captions.tsv", 20).size() == 20);
  // A tiny model end to end: train, evaluate with BLEU and pictures (JSON row with every column).
  const std::string model = dir.file("m.st"), plots = dir.file("plots");
  const CliResult trained = run_lava(fmt::format(
      "train --task caption --data {} --attn sat-hard --emb-size 6 --hidden-size 8 --annotation-size 8 "
      "--attn-size 4 --epochs 1 --save {} -q",
      out, model));
  REQUIRE(trained.code == 0);
  const CliResult evaluated = run_lava(fmt::format(
      "eval --task caption --data {} --model {} --beam 2 --plot {} --plot-scenes 2 --format json -q", out, model, plots));
  REQUIRE(evaluated.code == 0);
  for (const char* key : {"\"nll\":", "\"bound\":", "\"attn_acc\":", "\"bleu1\":", "\"bleu4\":", "\"likelihood\":\"exact\""})
    CHECK(evaluated.out.find(key) != std::string::npos);
  CHECK(std::filesystem::exists(plots + "/scene-1-sat-hard.svg"));
  CHECK(std::filesystem::exists(plots + "/scene-2-sat-hard.svg"));
  CHECK(!std::filesystem::exists(plots + "/scene-3-sat-hard.svg"));
  std::string text = read_file(out + "/valid.captions.tsv");
  text.replace(text.find("\n1\t"), 3, "\n0\t");  // line 3: scene 0 again where 1 was due
  write_file_atomic(out + "/valid.captions.tsv", text);
  const CliResult r = run_lava(fmt::format("train --task caption --data {} --epochs 1", out));
  CHECK(r.code == 1);
  CHECK(r.err.find(out + "/valid.captions.tsv:3: scene 0 where scene 1 was due") != std::string::npos);
  CHECK(r.err_lines() == 1);
}
