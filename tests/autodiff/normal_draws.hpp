#pragma once
// Test inputs: consecutive standard-normal draws from one counter-based stream (each call continues the stream).
#include <cstdint>
#include <vector>

#include "core/rng.hpp"

template <class T>
struct NormalDraws {
  lava::CounterRng rng;
  uint64_t counter = 0;
  std::vector<T> operator()(int64_t n) {
    std::vector<T> x(static_cast<size_t>(n));
    for (T& e : x) e = T(rng.normal(counter++));
    return x;
  }
};
