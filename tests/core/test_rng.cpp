// The counter-based RNG: Philox4x32-10 known-answer vectors (Random123's kat_vectors), and the properties the
// rest of LAVA relies on: draws are pure functions of (seed, stream, index), in range, and roughly uniform.
#include <doctest/doctest.h>

#include <cmath>

#include "core/rng.hpp"

using namespace lava;

TEST_CASE("rng: Philox4x32-10 matches the Random123 known-answer vectors") {
  using A4 = std::array<uint32_t, 4>;
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) == A4{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}) == A4{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}) ==
        A4{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("rng: draws are pure functions of (seed, stream, index)") {
  CounterRng a(42, stream_id("x")), b(42, stream_id("x")), c(43, stream_id("x")), d(42, stream_id("y"));
  for (uint64_t i = 0; i < 100; ++i) {
    CHECK(a.uniform(i) == b.uniform(i));
    CHECK(a.normal(i) == b.normal(i));
  }
  CHECK(a.uniform(0) != c.uniform(0));
  CHECK(a.uniform(0) != d.uniform(0));
  CHECK(a.child(1).uniform(0) == b.child(1).uniform(0));
  CHECK(a.child(1).uniform(0) != a.child(2).uniform(0));
}

TEST_CASE("rng: uniform in (0,1), normal and below have the right moments") {
  CounterRng r(7, 0);
  const int n = 200000;
  double su = 0, su2 = 0, sn = 0, sn2 = 0;
  int counts[5] = {0, 0, 0, 0, 0}, out_of_range = 0;
  for (int i = 0; i < n; ++i) {
    double u = r.uniform(uint64_t(i));
    out_of_range += !(u > 0.0 && u < 1.0);
    su += u, su2 += u * u;
    double z = r.normal(uint64_t(i));
    sn += z, sn2 += z * z;
    uint64_t k = r.below(uint64_t(i), 5);
    if (k < 5) ++counts[k];
    else ++out_of_range;
  }
  CHECK(out_of_range == 0);
  CHECK(std::abs(su / n - 0.5) < 0.005);
  CHECK(std::abs(su2 / n - su / n * su / n - 1.0 / 12) < 0.002);
  CHECK(std::abs(sn / n) < 0.01);
  CHECK(std::abs(sn2 / n - 1) < 0.02);
  for (int c : counts) CHECK(std::abs(c / double(n) - 0.2) < 0.005);
}
