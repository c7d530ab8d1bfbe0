#pragma once
// A tiny `lava data scenes` directory (12 train, 4 valid, 2 test scenes) over fake Fashion-MNIST images, in `dir`.
#include <filesystem>
#include <string>

#include "data/scenes.hpp"
#include "fake_mnist.hpp"
#include "temp_dir.hpp"

inline std::string tiny_scenes(const TempDir& dir) {
  const std::string mnist = dir.file("mnist");
  std::filesystem::create_directories(mnist);
  write_fake_mnist(mnist, 400, 150);
  lava::ScenesOptions o;
  o.out_dir = dir.file("scenes"), o.mnist_dir = mnist, o.seed = 2;
  o.train_scenes = 12, o.valid_scenes = 4, o.test_scenes = 2;
  lava::build_scenes(o);
  return o.out_dir;
}
