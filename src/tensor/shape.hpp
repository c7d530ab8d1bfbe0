#pragma once
// Shape of a contiguous row-major tensor of rank 0..4.
// Axis helpers split a shape around one axis into (outer, n, inner): element (o, i, r) sits at (o·n + i)·inner + r.
// Every reduction, softmax, concat and slice kernel works on that (outer, n, inner) view.
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/check.hpp"

namespace lava {

struct Shape {
  static constexpr int kMaxRank = 4;
  int rank = 0;
  int64_t dim[kMaxRank] = {1, 1, 1, 1};

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) {
    LAVA_CHECK(dims.size() <= kMaxRank, "rank {} > {}", dims.size(), kMaxRank);
    for (int64_t d : dims) {
      LAVA_CHECK(d >= 0, "negative dimension {}", d);
      dim[rank++] = d;
    }
  }
  int64_t operator[](int i) const { return dim[i < 0 ? i + rank : i]; }
  int64_t& operator[](int i) { return dim[i < 0 ? i + rank : i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dim[i];
    return n;
  }
  int64_t last() const { return rank ? dim[rank - 1] : 1; }
  bool operator==(const Shape& o) const {
    if (rank != o.rank) return false;
    for (int i = 0; i < rank; ++i)
      if (dim[i] != o.dim[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

  int norm_axis(int axis) const {
    int a = axis < 0 ? axis + rank : axis;
    LAVA_CHECK(a >= 0 && a < rank, "axis {} out of range for {}", axis, str());
    return a;
  }
  int64_t outer(int axis) const {
    int64_t n = 1;
    for (int i = 0; i < norm_axis(axis); ++i) n *= dim[i];
    return n;
  }
  int64_t inner(int axis) const {
    int64_t n = 1;
    for (int i = norm_axis(axis) + 1; i < rank; ++i) n *= dim[i];
    return n;
  }
  // The shape with `axis` removed (reductions) or resized (concat, slice).
  Shape without(int axis) const {
    int a = norm_axis(axis);
    Shape s;
    for (int i = 0; i < rank; ++i)
      if (i != a) s.dim[s.rank++] = dim[i];
    return s;
  }
  Shape with(int axis, int64_t n) const {
    Shape s = *this;
    s.dim[norm_axis(axis)] = n;
    return s;
  }
  // True when `small` equals the trailing dimensions of *this (the broadcast rule of binary ops).
  bool has_suffix(const Shape& small) const {
    if (small.rank > rank) return false;
    for (int i = 1; i <= small.rank; ++i)
      if (small.dim[small.rank - i] != dim[rank - i]) return false;
    return true;
  }
  std::string str() const {
    std::string s = "(";
    for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dim[i]);
    return s + ")";
  }
};

}  // namespace lava
