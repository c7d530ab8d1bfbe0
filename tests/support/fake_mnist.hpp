#pragma once
// A fake Fashion-MNIST directory for tests that build scenes (tests/data/test_scenes.cpp,
// tests/data/test_caption_data.cpp, and support/tiny_scenes.hpp for the captioning and task-registry tests).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "data/idx_reader.hpp"

// Pixel (y, x) of fake image i; any function works as long as the test can recompute it.
inline uint8_t fake_pixel(int i, int y, int x) { return uint8_t((i * 37 + y * 11 + x * 5) % 256); }

// n_train / n_test 28x28 images, label of image i = (i * 3) % 10.
inline void write_fake_mnist(const std::string& dir, int n_train, int n_test) {
  for (auto [prefix, n] : {std::pair<const char*, int>{"train", n_train}, {"t10k", n_test}}) {
    std::vector<uint8_t> pixels, labels;
    for (int i = 0; i < n; ++i) {
      labels.push_back(uint8_t((i * 3) % 10));
      for (int y = 0; y < 28; ++y)
        for (int x = 0; x < 28; ++x) pixels.push_back(fake_pixel(i, y, x));
    }
    lava::write_idx_gz(fmt::format("{}/{}-images-idx3-ubyte.gz", dir, prefix), {uint32_t(n), 28, 28}, pixels);
    lava::write_idx_gz(fmt::format("{}/{}-labels-idx1-ubyte.gz", dir, prefix), {uint32_t(n)}, labels);
  }
}
