// Output objectives over the support of a sparse distribution over positions (sparsemax or entmax weights): the
// exact marginal log Σ_{i∈supp p} p_i f_i(y) and the ELBO over supp q. The support rows are gathered (embedding)
// and go through the fused output layer (linear_log_softmax_pick) alone, so the output layer's cost is that of
// M = Σ_n |S_n| rows instead of N·S; a last op reduces each query's block of log f values
// (tensor/kernels_support_objective.hpp).
#include <cstring>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/op_profile.hpp"
#include "tensor/kernels_support_objective.hpp"

namespace lava {

namespace {

// The support rows of weights w (N, S), kept on the tape for the backward pass.
struct SupportBlocks {
  const int32_t* idx;        // (M) flat index n·S + s of each support row
  const int64_t* row_begin;  // (N + 1) query n's rows are row_begin[n] .. row_begin[n + 1]
  int64_t M;
};

template <class T>
SupportBlocks support_blocks(Tape<T>& tape, const T* w, int64_t N, int64_t S, int32_t* support) {
  std::vector<int32_t> idx;
  std::vector<int64_t> row_begin;
  const int64_t M = kernels::support_rows(idx, row_begin, w, N, S);
  LAVA_CHECK(M > 0, "output objective over a support: every query's weights are zero");
  int32_t* idx_kept = tape.template scratch<int32_t>(M);
  int64_t* begin_kept = tape.template scratch<int64_t>(N + 1);
  std::memcpy(idx_kept, idx.data(), sizeof(int32_t) * size_t(M));
  std::memcpy(begin_kept, row_begin.data(), sizeof(int64_t) * size_t(N + 1));
  if (support)
    for (int64_t n = 0; n < N; ++n) support[n] = int32_t(row_begin[size_t(n + 1)] - row_begin[size_t(n)]);
  return {idx_kept, begin_kept, M};
}

// log f at the support rows: log_softmax(x W + b)[k, y_n] for each support row k of query n, (M).
template <class T>
Var<T> support_log_f(Var<T> x, Var<T> W, Var<T> b, const SupportBlocks& rows, const int32_t* y, int64_t N,
                     int64_t S) {
  const int64_t H = x.shape().last();
  std::vector<int32_t> labels(size_t(rows.M));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = rows.row_begin[n]; k < rows.row_begin[n + 1]; ++k) labels[size_t(k)] = y[n];
  Var<T> gathered = embedding(reshape(x, Shape{N * S, H}), rows.idx, Shape{rows.M});
  return linear_log_softmax_pick(gathered, W, b, labels.data());
}

template <class T>
void check_shapes(const char* op, Var<T> x, Var<T> W, Var<T> b, Var<T> w) {
  LAVA_CHECK(W.rank() == 2 && b.rank() == 1 && W.dim(1) == b.dim(0) && x.rank() >= 2 &&
                 x.shape().last() == W.dim(0) && x.shape().without(-1) == w.shape() && w.shape().last() >= 1 &&
                 w.numel() < (int64_t(1) << 31),
             "{}: x {} W {} b {} weights {}", op, x.shape().str(), W.shape().str(), b.shape().str(),
             w.shape().str());
}

// J = Σ_{n: c_n ≠ 0} c_n Φ_n in increasing n; per_query (if not null) receives Φ.
template <class T>
T weighted_total(const T* phi, const T* c, int64_t N, T* per_query) {
  double J = 0;
  for (int64_t n = 0; n < N; ++n)
    if (c[n] != T(0)) J += double(c[n]) * double(phi[n]);
  if (per_query) std::memcpy(per_query, phi, sizeof(T) * size_t(N));
  return T(J);
}

// c copied onto the tape (the caller may reuse its buffer before backward).
template <class T>
const T* kept_weights(Tape<T>& tape, const T* c, int64_t N) {
  T* kept = tape.template scratch<T>(N);
  std::memcpy(kept, c, sizeof(T) * size_t(N));
  return kept;
}

}  // namespace

template <class T>
Var<T> support_marginal_objective(Var<T> x, Var<T> W, Var<T> b, Var<T> p, const int32_t* y, const T* c,
                                  T* per_query, int32_t* support) {
  LAVA_PROFILE_OP("support_marginal_objective");
  check_shapes("support_marginal_objective", x, W, b, p);
  Tape<T>& tape = *x.tape;
  const int64_t S = p.shape().last(), N = p.numel() / S;
  const SupportBlocks rows = support_blocks(tape, p.val(), N, S, support);
  Var<T> logf = support_log_f(x, W, b, rows, y, N, S);
  Var<T> out = tape.make_output(Shape{}, logf, p);
  T* phi = tape.template scratch<T>(N);
  const T* c_kept = kept_weights(tape, c, N);
  kernels::support_marginal_forward(phi, logf.val(), p.val(), rows.idx, rows.row_begin, N);
  out.val()[0] = weighted_total(phi, c_kept, N, per_query);
  if (out.needs_grad())
    tape.on_backward([logf, p, out, phi, c_kept, rows, N] {
      kernels::support_marginal_backward(logf.grad(), p.grad(), phi, logf.val(), p.val(), rows.idx, rows.row_begin,
                                         c_kept, out.grad()[0], N);
    });
  return out;
}

template <class T>
Var<T> support_elbo_objective(Var<T> x, Var<T> W, Var<T> b, Var<T> q, Var<T> log_p, const int32_t* y, const T* c,
                              T* per_query, int32_t* support) {
  LAVA_PROFILE_OP("support_elbo_objective");
  check_shapes("support_elbo_objective", x, W, b, q);
  LAVA_CHECK(log_p.shape() == q.shape(), "support_elbo_objective: q {} and log p {}", q.shape().str(),
             log_p.shape().str());
  Tape<T>& tape = *x.tape;
  const int64_t S = q.shape().last(), N = q.numel() / S;
  const SupportBlocks rows = support_blocks(tape, q.val(), N, S, support);
  Var<T> logf = support_log_f(x, W, b, rows, y, N, S);
  Var<T> out = tape.make_output(Shape{}, logf, q, log_p);
  T* phi = tape.template scratch<T>(N);
  const T* c_kept = kept_weights(tape, c, N);
  kernels::support_elbo_forward(phi, logf.val(), q.val(), log_p.val(), rows.idx, rows.row_begin, N);
  out.val()[0] = weighted_total(phi, c_kept, N, per_query);
  if (out.needs_grad())
    tape.on_backward([logf, q, log_p, out, c_kept, rows, N] {
      kernels::support_elbo_backward(logf.grad(), q.grad(), log_p.grad(), logf.val(), q.val(), log_p.val(), rows.idx,
                                     rows.row_begin, c_kept, out.grad()[0], N);
    });
  return out;
}

#define LAVA_INSTANTIATE(T)                                                                                    \
  template Var<T> support_marginal_objective(Var<T>, Var<T>, Var<T>, Var<T>, const int32_t*, const T*, T*,       \
                                             int32_t*);                                                          \
  template Var<T> support_elbo_objective(Var<T>, Var<T>, Var<T>, Var<T>, Var<T>, const int32_t*, const T*, T*,   \
                                         int32_t*);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
