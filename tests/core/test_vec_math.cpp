// The 8-lane float exp / tanh / σ of src/core/vec_math.hpp against double-precision libm over dense sweeps, and
// the array helpers against plain loops (tails, aliasing, padding that must not leak into sums).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/vec_math.hpp"

using namespace lava;

namespace {

// |got − ref| in units of the float spacing at ref.
double ulps(float got, double ref) {
  const float r = std::abs(float(ref));
  const double spacing = double(std::nextafter(r, INFINITY)) - double(r);
  return std::abs(double(got) - ref) / spacing;
}

// About 2^20 floats spread evenly over [lo, hi) in the order of their bit patterns (so every binade is sampled as
// densely as its neighbours), through the array function (so full blocks and tails both run). Walking every float
// instead would be 2^31 steps near 0, minutes under the sanitizer build.
int64_t float_key(float f) {
  const int32_t bits = std::bit_cast<int32_t>(f);
  return bits >= 0 ? int64_t(bits) : -int64_t(bits & 0x7fffffff);
}
float key_float(int64_t k) {
  return k >= 0 ? std::bit_cast<float>(int32_t(k)) : std::bit_cast<float>(int32_t(uint32_t(-k) | 0x80000000u));
}
template <class F>
std::vector<float> sweep(float lo, float hi, F fn, std::vector<float>& x) {
  x.clear();
  const int64_t k0 = float_key(lo), k1 = float_key(hi), step = std::max<int64_t>(1, (k1 - k0) >> 20);
  for (int64_t k = k0; k < k1; k += step) x.push_back(key_float(k));
  std::vector<float> y(x.size());
  fn(y.data(), x.data(), int64_t(x.size()));
  return y;
}

}  // namespace

TEST_CASE("vec_math: exp within 1.1 ulp of libm on [-87, 88.3], clamped outside") {
  std::vector<float> x;
  for (auto [lo, hi] : {std::pair{-87.f, -80.f}, {-10.f, 10.f}, {80.f, 88.3f}}) {
    const auto y = sweep(lo, hi, vmath::exp_array<float>, x);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], std::exp(double(x[i]))));
    CAPTURE(lo);
    CHECK(worst <= 1.1);
  }
  float big[3] = {100.f, -100.f, NAN}, out[3];
  vmath::exp_array(out, big, 3);
  CHECK(std::isfinite(out[0]));
  CHECK(out[1] >= 0.f);
  CHECK(out[1] < 1e-37f);
  CHECK(std::isnan(out[2]));
}

TEST_CASE("vec_math: tanh within 2 ulp of libm, odd, and saturating") {
  std::vector<float> x;
  const auto y = sweep(-12.f, 12.f, vmath::tanh_array<float>, x);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], std::tanh(double(x[i]))));
  CHECK(worst <= 2.0);
  float tiny[4] = {1e-30f, -1e-30f, 0.f, 50.f}, out[4];
  vmath::tanh_array(out, tiny, 4);
  CHECK(out[0] == 1e-30f);
  CHECK(out[1] == -1e-30f);
  CHECK(out[2] == 0.f);
  CHECK(out[3] == 1.f);
}

TEST_CASE("vec_math: sigmoid within 3 ulp of libm where it is above 1e-37") {
  std::vector<float> x;
  const auto y = sweep(-85.f, 30.f, vmath::sigmoid_array<float>, x);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], 1.0 / (1.0 + std::exp(-double(x[i])))));
  CHECK(worst <= 3.0);
}

TEST_CASE("vec_math: array helpers match plain loops for every tail length") {
  for (int64_t n = 1; n <= 37; ++n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(std::sin(0.7 * double(i * i + n))) * 6.f;
    CAPTURE(n);
    float ref_max = x[0];
    for (float v : x) ref_max = std::max(ref_max, v);
    CHECK(vmath::max_array(x.data(), n) == ref_max);

    std::vector<float> e(static_cast<size_t>(n));
    const float s = vmath::sum_exp_shifted(e.data(), x.data(), ref_max, n);
    double ref_s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double ref = std::exp(double(x[size_t(i)] - ref_max));  // the shift is rounded in float first
      CHECK(ulps(e[size_t(i)], ref) <= 1.1);
      ref_s += ref;
    }
    CHECK(std::abs(double(s) - ref_s) <= 1e-6 * ref_s);  // padding lanes add nothing
    CHECK(vmath::sum_exp_shifted<float>(nullptr, x.data(), ref_max, n) == s);

    std::vector<float> y = x;  // in place, as the output layer uses it
    vmath::scaled_exp_shifted(y.data(), y.data(), ref_max, -2.f, n);
    for (int64_t i = 0; i < n; ++i) CHECK(y[size_t(i)] == -2.f * e[size_t(i)]);

    // The value of an element does not depend on where a loop split puts it.
    std::vector<float> whole(static_cast<size_t>(n)), parts(static_cast<size_t>(n));
    vmath::tanh_array(whole.data(), x.data(), n);
    const int64_t cut = n / 3;
    vmath::tanh_array(parts.data(), x.data(), cut);
    vmath::tanh_array(parts.data() + cut, x.data() + cut, n - cut);
    CHECK(whole == parts);
  }
}

TEST_CASE("vec_math: 16 lanes give the 8-lane bits; sums keep 8 lane sums in order; add_then_max is add then max") {
  for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 32, 33, 100, 10007}) {
    CAPTURE(n);
    std::vector<float> x(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(i)] = float(std::sin(0.37 * double(i * i + n))) * 20.f;
      b[size_t(i)] = float(std::cos(0.11 * double(i))) * 3.f;
    }
    // Every element as the 8-lane exp computes it, one lane block at a time.
    std::vector<float> e8(static_cast<size_t>(n)), e(static_cast<size_t>(n));
    const float m = vmath::max_array(x.data(), n);
    for (int64_t i = 0; i < n; i += vmath::kLanes) {
      const int64_t k = std::min<int64_t>(vmath::kLanes, n - i);
      vmath::store_partial(e8.data() + i, vmath::exp_v(vmath::load_partial(x.data() + i, k, 0.f) - m), k);
    }
    // The sum the 8-lane loop forms: lane l sums elements l, l + 8, l + 16, ... in order; then lanes 0..7.
    float lanes[vmath::kLanes] = {};
    for (int64_t i = 0; i < n; ++i) lanes[i % vmath::kLanes] += e8[size_t(i)];
    float ref = 0;
    for (float l : lanes) ref += l;
    const float s = vmath::sum_exp_shifted(e.data(), x.data(), m, n);
    CHECK(std::bit_cast<uint32_t>(s) == std::bit_cast<uint32_t>(ref));
    CHECK(e == e8);
    std::vector<float> t(static_cast<size_t>(n)), t8(static_cast<size_t>(n));
    vmath::tanh_array(t.data(), x.data(), n);
    for (int64_t i = 0; i < n; i += vmath::kLanes) {
      const int64_t k = std::min<int64_t>(vmath::kLanes, n - i);
      vmath::store_partial(t8.data() + i, vmath::tanh_v(vmath::load_partial(x.data() + i, k, 0.f)), k);
    }
    CHECK(t == t8);
    std::vector<float> sum = x;
    const float mx = vmath::add_then_max(sum.data(), b.data(), n);
    std::vector<float> ref_sum(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ref_sum[size_t(i)] = x[size_t(i)] + b[size_t(i)];
    CHECK(sum == ref_sum);
    CHECK(mx == *std::max_element(ref_sum.begin(), ref_sum.end()));
  }
}

TEST_CASE("vec_math: double instantiations are libm") {
  const double x[3] = {-3.5, 0.25, 2.0};
  double y[3];
  vmath::tanh_array(y, x, 3);
  for (int i = 0; i < 3; ++i) CHECK(y[i] == std::tanh(x[i]));
  vmath::sigmoid_array(y, x, 3);
  for (int i = 0; i < 3; ++i) CHECK(y[i] == 1.0 / (1.0 + std::exp(-x[i])));
  CHECK(vmath::sum_exp_shifted<double>(nullptr, x, 2.0, 3) == std::exp(-5.5) + std::exp(-1.75) + std::exp(0.0));
}
