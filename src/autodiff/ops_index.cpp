// Indexing ops: embedding lookup (gather rows), pick (one entry per row), masked fill.
// Index and mask arrays are copied onto the tape, so callers may reuse their buffers before backward().
#include <cstring>

#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_index.hpp"

namespace lava {

template <class T>
Var<T> embedding(Var<T> table, const int32_t* ids, const Shape& ids_shape) {
  LAVA_PROFILE_OP("embedding");
  LAVA_CHECK(table.rank() == 2, "embedding table must be (V, E), got {}", table.shape().str());
  const int64_t V = table.dim(0), E = table.dim(1), rows = ids_shape.numel();
  for (int64_t r = 0; r < rows; ++r) LAVA_CHECK(ids[r] >= 0 && ids[r] < V, "embedding id {} outside [0, {})", ids[r], V);
  LAVA_CHECK(ids_shape.rank < Shape::kMaxRank, "embedding ids rank {} too large", ids_shape.rank);
  Shape out = ids_shape;
  out.dim[out.rank++] = E;
  Var<T> y = table.tape->make_output(out, table);
  int32_t* kept = table.tape->template scratch<int32_t>(rows);
  std::memcpy(kept, ids, sizeof(int32_t) * size_t(rows));
  kernels::embedding_forward(y.val(), table.val(), kept, rows, E);
  if (y.needs_grad())
    table.tape->on_backward(
        [table, y, kept, rows, E] { kernels::embedding_backward(table.grad(), y.grad(), kept, rows, E); });
  return y;
}

template <class T>
Var<T> pick(Var<T> x, const int32_t* idx) {
  LAVA_PROFILE_OP("pick");
  const int64_t C = x.shape().last(), rows = x.numel() / C;
  for (int64_t r = 0; r < rows; ++r) LAVA_CHECK(idx[r] >= 0 && idx[r] < C, "pick index {} outside [0, {})", idx[r], C);
  Var<T> y = x.tape->make_output(x.shape().without(-1), x);
  int32_t* kept = x.tape->template scratch<int32_t>(rows);
  std::memcpy(kept, idx, sizeof(int32_t) * size_t(rows));
  kernels::pick_forward(y.val(), x.val(), kept, rows, C);
  if (y.needs_grad())
    x.tape->on_backward([x, y, kept, rows, C] { kernels::pick_backward(x.grad(), y.grad(), kept, rows, C); });
  return y;
}

template <class T>
Var<T> masked_fill(Var<T> x, const uint8_t* mask, const Shape& mask_shape, T value) {
  LAVA_PROFILE_OP("masked_fill");
  LAVA_CHECK(x.shape().has_suffix(mask_shape), "mask {} does not broadcast to {}", mask_shape.str(), x.shape().str());
  const int64_t n = x.numel(), nm = mask_shape.numel();
  Var<T> y = x.tape->make_output(x.shape(), x);
  uint8_t* kept = x.tape->template scratch<uint8_t>(nm);
  std::memcpy(kept, mask, size_t(nm));
  kernels::masked_fill_forward(y.val(), x.val(), kept, nm, n, value);
  if (y.needs_grad())
    x.tape->on_backward([x, y, kept, nm, n] { kernels::masked_fill_backward(x.grad(), y.grad(), kept, nm, n); });
  return y;
}

#define LAVA_INSTANTIATE(T)                                                  \
  template Var<T> embedding(Var<T>, const int32_t*, const Shape&);          \
  template Var<T> pick(Var<T>, const int32_t*);                             \
  template Var<T> masked_fill(Var<T>, const uint8_t*, const Shape&, T);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
