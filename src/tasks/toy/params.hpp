#pragma once
// The toy's parameters (tasks/toy/toy.hpp): read from the JSON of `lava toy --params`, or drawn from a seed.
#include <cstdint>
#include <string>
#include <vector>

namespace lava {

struct ToyParams {
  int K = 0, D = 0, H = 0, C = 0;
  std::vector<double> features;  // (K, D)
  std::vector<double> scores;    // (K)
  std::vector<double> W1, b1;    // (H, D), (H)
  std::vector<double> W2, b2;    // (C, H), (C)
  int label = 0;
};

// Reads the JSON of `lava toy --params`; every shape problem is one InputError naming file and line.
ToyParams toy_params_from_json(const std::string& path);
// The same from text already read (`path` names it in errors; the fuzz harness's entry point).
ToyParams toy_params_from_text(const std::string& text, const std::string& path);
// Draws every parameter from (seed) with the given sizes; the label is drawn too.
ToyParams toy_params_random(uint64_t seed, int K, int D, int H, int C);

}  // namespace lava
