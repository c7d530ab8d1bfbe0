#pragma once
// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
// Every draw is a pure function of (seed, stream, index): the 128-bit counter is (index, stream) and the 64-bit key
// is the seed. No state is shared between threads, so a kernel that draws element i from index i gives the same
// numbers with any thread count and any iteration order.
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace lava {

inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(kMul0) * ctr[0];
    uint64_t p1 = uint64_t(kMul1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1), uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return ctr;
}

// FNV-1a, to name streams by string ("dropout/enc", "init/W_out") instead of by magic numbers.
constexpr uint64_t stream_id(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  return h;
}

struct CounterRng {
  uint64_t seed = 0;
  uint64_t stream = 0;

  CounterRng() = default;
  CounterRng(uint64_t seed_, uint64_t stream_) : seed(seed_), stream(stream_) {}
  // A child stream: same seed, stream derived from this one and a tag (e.g. a step number).
  CounterRng child(uint64_t tag) const {
    auto b = philox4x32_10({uint32_t(tag), uint32_t(tag >> 32), uint32_t(stream), uint32_t(stream >> 32)},
                           {0x85EBCA6Bu, 0xC2B2AE35u});
    return {seed, (uint64_t(b[0]) << 32 | b[1]) ^ stream};
  }

  std::array<uint32_t, 4> block(uint64_t index) const {
    return philox4x32_10({uint32_t(index), uint32_t(index >> 32), uint32_t(stream), uint32_t(stream >> 32)},
                         {uint32_t(seed), uint32_t(seed >> 32)});
  }
  // Uniform on the open interval (0, 1), 53 random bits: never 0, so log(u) is finite.
  double uniform(uint64_t index) const {
    auto b = block(index);
    uint64_t bits = (uint64_t(b[0]) << 21) ^ (uint64_t(b[1]) >> 11);  // 53 bits
    return (double(bits) + 0.5) * 0x1.0p-53;
  }
  // Standard normal by Box-Muller on two independent uniforms from the same block.
  double normal(uint64_t index) const {
    auto b = block(index);
    double u1 = (double((uint64_t(b[0]) << 21) ^ (b[1] >> 11)) + 0.5) * 0x1.0p-53;
    double u2 = (double((uint64_t(b[2]) << 21) ^ (b[3] >> 11)) + 0.5) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Uniform integer in [0, n) by the multiply-shift of a 64-bit draw (bias < n / 2^64).
  uint64_t below(uint64_t index, uint64_t n) const {
    auto b = block(index);
    uint64_t x = uint64_t(b[0]) << 32 | b[1];
    return uint64_t((__uint128_t(x) * n) >> 64);
  }
};

}  // namespace lava
