#pragma once
// What scenes.cpp (composing, writing and reading scene directories) and scene_questions.cpp (asking about a
// scene) share: the class and position names, and the per-scene random draws.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/rng.hpp"
#include "data/scenes.hpp"

namespace lava::scenes_detail {

inline constexpr std::array<std::string_view, kFashionClasses> kClassNames = {
    "t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot"};
inline constexpr std::array<std::string_view, kFashionClasses> kClassPlurals = {
    "t-shirts", "trousers", "pullovers", "dresses", "coats", "sandals", "shirts", "sneakers", "bags", "ankle boots"};
inline constexpr std::array<std::string_view, kSceneRegions> kPositionNames = {
    "top left", "top middle", "top right", "middle left", "center", "middle right",
    "bottom left", "bottom middle", "bottom right"};

// Sequential draws from one counter stream: draw i is a pure function of (seed, stream, i).
struct Draws {
  CounterRng rng;
  uint64_t next = 0;
  int below(int n) { return int(rng.below(next++, uint64_t(n))); }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[size_t(below(int(v.size())))]; }
};

inline Draws scene_stream(uint64_t seed, std::string_view purpose, std::string_view split, uint64_t index) {
  return Draws{CounterRng(seed, stream_id(fmt::format("scenes/{}/{}", purpose, split))).child(index)};
}

}  // namespace lava::scenes_detail
