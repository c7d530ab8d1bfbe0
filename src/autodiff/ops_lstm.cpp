// The fused LSTM cell: one forward kernel, one backward kernel, two outputs (h, c).
#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_lstm.hpp"

namespace lava {

template <class T>
std::pair<Var<T>, Var<T>> lstm_cell(Var<T> gates, Var<T> c_prev) {
  LAVA_PROFILE_OP("lstm_cell");
  LAVA_CHECK(gates.rank() == 2 && c_prev.rank() == 2 && gates.dim(0) == c_prev.dim(0) &&
                 gates.dim(1) == 4 * c_prev.dim(1),
             "lstm_cell: gates {} and c_prev {}", gates.shape().str(), c_prev.shape().str());
  Tape<T>& tape = *gates.tape;
  const int64_t B = c_prev.dim(0), H = c_prev.dim(1);
  Var<T> h = tape.make_output(c_prev.shape(), gates, c_prev);
  Var<T> c = tape.make_output(c_prev.shape(), gates, c_prev);
  T* act = tape.template scratch<T>(B * 4 * H);
  T* tanh_c = tape.template scratch<T>(B * H);
  kernels::lstm_cell_forward(h.val(), c.val(), act, tanh_c, gates.val(), c_prev.val(), B, H);
  if (h.needs_grad())
    tape.on_backward([gates, c_prev, h, c, act, tanh_c, B, H] {
      kernels::lstm_cell_backward(gates.grad(), c_prev.grad(), h.grad(), c.grad(), act, tanh_c, c_prev.val(), B, H);
    });
  return {h, c};
}

template std::pair<Var<float>, Var<float>> lstm_cell(Var<float>, Var<float>);
template std::pair<Var<double>, Var<double>> lstm_cell(Var<double>, Var<double>);

}  // namespace lava
