// sparsemax and 1.5-entmax over the last axis: normalisers with exact zeros (tensor/kernels_sparsemax.hpp).
// The backward pass needs only the output y, whose positive entries are the support.
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_sparsemax.hpp"

namespace lava {

namespace {
template <class T>
Var<T> sparse_map_op(Var<T> x, const uint8_t* mask, int32_t* support, kernels::SparseMap map) {
  LAVA_CHECK(x.rank() >= 1 && x.shape().last() >= 1, "sparse normaliser over an empty axis: x {}", x.shape().str());
  const int64_t n = x.shape().last(), rows = x.numel() / n;
  Var<T> y = x.tape->make_output(x.shape(), x);
  kernels::sparse_map_forward(y.val(), support, x.val(), mask, rows, n, map);
  if (y.needs_grad())
    x.tape->on_backward(
        [x, y, rows, n, map] { kernels::sparse_map_backward(x.grad(), y.val(), y.grad(), rows, n, map); });
  return y;
}
}  // namespace

template <class T>
Var<T> sparsemax(Var<T> x, const uint8_t* mask, int32_t* support) {
  LAVA_PROFILE_OP("sparsemax");
  return sparse_map_op(x, mask, support, kernels::SparseMap::sparsemax);
}

template <class T>
Var<T> entmax15(Var<T> x, const uint8_t* mask, int32_t* support) {
  LAVA_PROFILE_OP("entmax15");
  return sparse_map_op(x, mask, support, kernels::SparseMap::entmax15);
}

#define LAVA_INSTANTIATE(T)                                           \
  template Var<T> sparsemax(Var<T>, const uint8_t*, int32_t*);        \
  template Var<T> entmax15(Var<T>, const uint8_t*, int32_t*);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
