#pragma once
// The tiny VQA data set of tests/tasks/vqa/test_vqa_model.cpp, tests/tasks/vqa/test_vqa_eval.cpp (through
// tests/tasks/vqa/vqa_tiny_model.hpp) and tests/tasks/vqa/test_vqa_cli.cpp.
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/rng.hpp"
#include "data/npy_file.hpp"
#include "support/temp_dir.hpp"
#include "tasks/vqa/data.hpp"

namespace vqa_test {

using namespace lava;

// A tiny user data set: images × regions × dim uniform features, and questions whose answer is a function of one
// region's first feature (so the data has something to learn). test holds an answer training never saw ("green")
// and answer counts.
struct TinyVqa {
  TempDir tmp{"vqa"};
  std::string features, questions;  // questions: a directory with {train,valid,test}.questions.tsv
  int images, regions, dim;

  explicit TinyVqa(int n_images = 12, int n_regions = 4, int n_dim = 6, int n_train = 40)
      : images(n_images), regions(n_regions), dim(n_dim) {
    features = tmp.file("feats.npy");
    std::vector<float> f(size_t(images) * size_t(regions) * size_t(dim));
    const CounterRng rng(7, 1);
    for (size_t i = 0; i < f.size(); ++i) f[i] = float(rng.uniform(i));
    write_npy(features, {images, regions, dim}, f.data());
    questions = tmp.file("q");
    std::filesystem::create_directories(questions);
    const char* colours[] = {"red", "blue", "top left"};
    auto question = [&](int k, int line, bool test) {
      const int image = k % images, region = (k / images) % regions;
      const float v = f[(size_t(image) * size_t(regions) + size_t(region)) * size_t(dim)];
      const std::string answer = test && line == 3 ? "green" : colours[int(v * 3)];
      const std::string counts = test ? fmt::format("{}:2,red:1", answer) : "";
      return fmt::format("{}\twhat is in region {} ?\t{}\t{}\t{}\t{}\n", image, region, answer, counts,
                         region % 2 ? "odd" : "even", region);
    };
    for (auto [split, n] : {std::pair<const char*, int>{"train", n_train}, {"valid", 10}, {"test", 10}}) {
      std::string text = "# image\tquestion\tanswer\tcounts\ttype\tregions\n";
      for (int k = 0; k < n; ++k) text += question(k + (split[1] == 'r' ? 0 : 5), k, split[1] == 'e');
      write_file_atomic(questions + "/" + split + ".questions.tsv", text);
    }
  }
  VqaDataOptions data() const { return {"", features, questions, ""}; }
};

}  // namespace vqa_test
