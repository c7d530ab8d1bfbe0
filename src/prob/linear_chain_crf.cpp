// Forward–backward for linear-chain CRFs in log space, with the backward passes of log Z and of the marginals.
#include "prob/linear_chain_crf.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.hpp"
#include "core/op_profile.hpp"

namespace lava {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct CrfDims {
  int64_t B, N, K;
  bool shared;  // pairwise (K, K) at every position, rather than (B, N−1, K, K)
};

CrfDims crf_dims(const Shape& su, const Shape& sp) {
  LAVA_CHECK(su.rank == 3, "crf: unary must be (B, N, K), got {}", su.str());
  const int64_t B = su[0], N = su[1], K = su[2];
  LAVA_CHECK(K >= 1, "crf: no states in unary {}", su.str());
  const bool shared = sp == Shape{K, K};
  LAVA_CHECK(shared || (N >= 1 && sp == Shape{B, N - 1, K, K}),
             "crf: pairwise {} fits neither ({}, {}) nor ({}, {}, {}, {})", sp.str(), K, K, B, N - 1, K, K);
  return {B, N, K, shared};
}

// The lengths on the tape (N for every row when none are given), checked to lie in [0, N].
template <class T>
const int32_t* copy_lengths(Tape<T>& tape, const int32_t* lengths, const CrfDims& d) {
  int32_t* lens = tape.template scratch<int32_t>(d.B);
  for (int64_t b = 0; b < d.B; ++b) {
    lens[b] = lengths ? lengths[b] : int32_t(d.N);
    LAVA_CHECK(lens[b] >= 0 && lens[b] <= d.N, "crf: length {} of row {} outside [0, {}]", lens[b], b, d.N);
  }
  return lens;
}

// One row b of the batch: unary scores u_i(c) (N, K), rows ≥ L unused; pairwise θ_i(c, c') (K, K) per position.
template <class T>
struct Chain {
  const T* u;
  const T* pw;
  int64_t pw_stride;  // 0 when θ is shared by all positions, K·K otherwise
  int64_t L, K;
  double unary(int64_t i, int64_t c) const { return double(u[i * K + c]); }
  double pair(int64_t i, int64_t c, int64_t c2) const { return double(pw[i * pw_stride + c * K + c2]); }
};

template <class T>
Chain<T> chain_of(const T* unary, const T* pairwise, const int32_t* lens, const CrfDims& d, int64_t b) {
  const int64_t KK = d.K * d.K;
  return {unary + b * d.N * d.K, d.shared ? pairwise : pairwise + b * (d.N - 1) * KK, d.shared ? 0 : KK, lens[b], d.K};
}

// log Σ_{c<K} exp(term(c)), shifted by the maximum.
template <class F>
double logsumexp_over(int64_t K, F term) {
  double m = kNegInf;
  for (int64_t c = 0; c < K; ++c) m = std::max(m, term(c));
  if (m == kNegInf) return m;
  double s = 0;
  for (int64_t c = 0; c < K; ++c) s += std::exp(term(c) - m);
  return m + std::log(s);
}

// α_0(c) = u_0(c),  α_i(c) = u_i(c) + log Σ_{c'} exp(α_{i−1}(c') + θ_{i−1}(c', c)),  log Z = log Σ_c exp(α_{L−1}(c)).
// a: (N, K), rows < L written. An empty chain has one configuration of score 0: log Z = 0.
template <class T>
double forward_messages(const Chain<T>& ch, double* a) {
  const int64_t K = ch.K;
  if (ch.L == 0) return 0;
  for (int64_t c = 0; c < K; ++c) a[c] = ch.unary(0, c);
  for (int64_t i = 1; i < ch.L; ++i)
    for (int64_t c = 0; c < K; ++c)
      a[i * K + c] = ch.unary(i, c) +
                     logsumexp_over(K, [&](int64_t c0) { return a[(i - 1) * K + c0] + ch.pair(i - 1, c0, c); });
  return logsumexp_over(K, [&](int64_t c) { return a[(ch.L - 1) * K + c]; });
}

// β_{L−1}(c) = 0,  β_i(c) = log Σ_{c'} exp(θ_i(c, c') + u_{i+1}(c') + β_{i+1}(c')).  be: (N, K), rows < L written.
template <class T>
void backward_messages(const Chain<T>& ch, double* be) {
  const int64_t K = ch.K;
  if (ch.L == 0) return;
  for (int64_t c = 0; c < K; ++c) be[(ch.L - 1) * K + c] = 0;
  for (int64_t i = ch.L - 2; i >= 0; --i)
    for (int64_t c = 0; c < K; ++c)
      be[i * K + c] = logsumexp_over(
          K, [&](int64_t c1) { return ch.pair(i, c, c1) + ch.unary(i + 1, c1) + be[(i + 1) * K + c1]; });
}

// log ξ_i(c, c') = log p(z_i = c, z_{i+1} = c') = α_i(c) + θ_i(c, c') + u_{i+1}(c') + β_{i+1}(c') − log Z.
template <class T>
double log_pair_marginal(const Chain<T>& ch, const double* a, const double* be, double log_z, int64_t i, int64_t c,
                         int64_t c1) {
  const int64_t K = ch.K;
  return a[i * K + c] + ch.pair(i, c, c1) + ch.unary(i + 1, c1) + be[(i + 1) * K + c1] - log_z;
}

// Where a chain's pairwise gradient goes: its own (N−1, K, K) slice, or, for a shared θ, a per-row (K, K) partial
// that sum_shared_pairwise adds up over rows in row order (so no two threads write the same slot).
double* pairwise_target(double* partial, const CrfDims& d, int64_t b) {
  double* p = partial + b * d.K * d.K;
  std::fill(p, p + d.K * d.K, 0.0);
  return p;
}
template <class T>
void sum_shared_pairwise(T* dpw, const double* partial, const CrfDims& d) {
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t cc = 0; cc < d.K * d.K; ++cc) dpw[cc] += T(partial[b * d.K * d.K + cc]);
}

bool parallel_worth(const CrfDims& d) { return d.B > 1 && d.B * d.N * d.K * d.K >= kParallelMin / 16; }

}  // namespace

// log Z[b] by the forward recursion;  backward:
//   dunary[b, i, c] += dZ[b] · exp(α_i(c) + β_i(c) − log Z)     (the unary marginal)
//   dθ_i(c, c')     += dZ[b] · ξ_i(c, c')                         (the pairwise marginal)
// Buffers: unary, dunary (B, N, K); pairwise, dpairwise (K, K) or (B, N−1, K, K); logz, dlogz (B);
// alpha, beta (B, N, K) and log_z (B) in double; partial (B, K, K) for a shared θ.
template <class T>
Var<T> crf_log_partition(Var<T> unary, Var<T> pairwise, const int32_t* lengths) {
  LAVA_PROFILE_OP("crf_log_partition");
  const CrfDims d = crf_dims(unary.shape(), pairwise.shape());
  Tape<T>& tape = *unary.tape;
  const int32_t* lens = copy_lengths(tape, lengths, d);
  Var<T> out = tape.make_output(Shape{d.B}, unary, pairwise);
  const int64_t NK = d.N * d.K;
  double* alpha = tape.template scratch<double>(d.B * NK);
  double* log_z = tape.template scratch<double>(d.B);
  const T* uv = unary.val();
  const T* pv = pairwise.val();
  T* ov = out.val();
#pragma omp parallel for schedule(static) if (parallel_worth(d))
  for (int64_t b = 0; b < d.B; ++b) {
    log_z[b] = forward_messages(chain_of(uv, pv, lens, d, b), alpha + b * NK);
    ov[b] = T(log_z[b]);
  }
  if (!out.needs_grad()) return out;
  double* beta = tape.template scratch<double>(d.B * NK);
  double* partial = d.shared && pairwise.needs_grad() ? tape.template scratch<double>(d.B * d.K * d.K) : nullptr;
  tape.on_backward([unary, pairwise, out, d, lens, alpha, beta, log_z, partial] {
    const T* uv = unary.val();
    const T* pv = pairwise.val();
    const T* dz = out.grad();
    T* du = unary.grad();
    T* dpw = pairwise.grad();
    const int64_t NK = d.N * d.K, K = d.K;
#pragma omp parallel for schedule(static) if (parallel_worth(d))
    for (int64_t b = 0; b < d.B; ++b) {
      const Chain<T> ch = chain_of(uv, pv, lens, d, b);
      const double g = double(dz[b]), *a = alpha + b * NK;
      double* be = beta + b * NK;
      double* dpart = partial ? pairwise_target(partial, d, b) : nullptr;
      backward_messages(ch, be);
      if (du)
        for (int64_t i = 0; i < ch.L * K; ++i) du[b * NK + i] += T(g * std::exp(a[i] + be[i] - log_z[b]));
      if (!dpw) continue;
      for (int64_t i = 0; i + 1 < ch.L; ++i)
        for (int64_t c = 0; c < K; ++c)
          for (int64_t c1 = 0; c1 < K; ++c1) {
            const double xi = std::exp(log_pair_marginal(ch, a, be, log_z[b], i, c, c1));
            if (dpart)
              dpart[c * K + c1] += g * xi;
            else
              dpw[((b * (d.N - 1) + i) * K + c) * K + c1] += T(g * xi);
          }
    }
    if (partial) sum_shared_pairwise(dpw, partial, d);
  });
  return out;
}

// μ[b, i, c] = exp(α_i(c) + β_i(c) − log Z) for i < L, 0 beyond.
// Backward: the Hessian of log Z times v = dμ. With s(z) = Σ_k v_k(z_k), ∂/∂θ_f Σ v·μ = Cov(f(z), s(z)) for each
// feature f, so
//   dunary_i(c)  += μ_i(c)     · (E[s | z_i = c] − E[s])
//   dθ_i(c, c')  += ξ_i(c, c') · (E[s | z_i = c, z_{i+1} = c'] − E[s])
// where, by the Markov property, E[s | z_i = c] = v_i(c) + Lf_i(c) + R_i(c) with
//   Lf_0 = 0,      Lf_{i+1}(c') = Σ_c p(z_i = c | z_{i+1} = c') (v_i(c) + Lf_i(c)),
//                  p(z_i = c | z_{i+1} = c') = exp(α_i(c) + θ_i(c, c') − (α_{i+1}(c') − u_{i+1}(c')))
//   R_{L−1} = 0,   R_i(c) = Σ_{c'} p(z_{i+1} = c' | z_i = c) (v_{i+1}(c') + R_{i+1}(c')),
//                  p(z_{i+1} = c' | z_i = c) = exp(θ_i(c, c') + u_{i+1}(c') + β_{i+1}(c') − β_i(c))
// and E[s | z_i = c, z_{i+1} = c'] = Lf_i(c) + v_i(c) + v_{i+1}(c') + R_{i+1}(c'), E[s] = Σ_c μ_0(c)(v_0(c) + R_0(c)).
// The conditionals come from the log-space messages, so no marginal is ever divided by (they may underflow to 0).
// Buffers: unary, dunary, mu, dmu (B, N, K); pairwise, dpairwise (K, K) or (B, N−1, K, K); alpha, beta, left,
// right (B, N, K) and log_z (B) in double; partial (B, K, K) for a shared θ.
template <class T>
Var<T> crf_marginals(Var<T> unary, Var<T> pairwise, const int32_t* lengths) {
  LAVA_PROFILE_OP("crf_marginals");
  const CrfDims d = crf_dims(unary.shape(), pairwise.shape());
  Tape<T>& tape = *unary.tape;
  const int32_t* lens = copy_lengths(tape, lengths, d);
  Var<T> mu = tape.make_output(Shape{d.B, d.N, d.K}, unary, pairwise);
  const int64_t NK = d.N * d.K;
  double* alpha = tape.template scratch<double>(d.B * NK);
  double* beta = tape.template scratch<double>(d.B * NK);
  double* log_z = tape.template scratch<double>(d.B);
  const T* uv = unary.val();
  const T* pv = pairwise.val();
  T* mv = mu.val();
#pragma omp parallel for schedule(static) if (parallel_worth(d))
  for (int64_t b = 0; b < d.B; ++b) {
    const Chain<T> ch = chain_of(uv, pv, lens, d, b);
    const double *a = alpha + b * NK, *be = beta + b * NK;
    log_z[b] = forward_messages(ch, alpha + b * NK);
    backward_messages(ch, beta + b * NK);
    for (int64_t i = 0; i < NK; ++i) mv[b * NK + i] = i < ch.L * d.K ? T(std::exp(a[i] + be[i] - log_z[b])) : T(0);
  }
  if (!mu.needs_grad()) return mu;
  double* left = tape.template scratch<double>(d.B * NK);
  double* right = tape.template scratch<double>(d.B * NK);
  double* partial = d.shared && pairwise.needs_grad() ? tape.template scratch<double>(d.B * d.K * d.K) : nullptr;
  tape.on_backward([unary, pairwise, mu, d, lens, alpha, beta, log_z, left, right, partial] {
    const T* uv = unary.val();
    const T* pv = pairwise.val();
    const T* dmu = mu.grad();
    T* du = unary.grad();
    T* dpw = pairwise.grad();
    const int64_t NK = d.N * d.K, K = d.K;
#pragma omp parallel for schedule(static) if (parallel_worth(d))
    for (int64_t b = 0; b < d.B; ++b) {
      const Chain<T> ch = chain_of(uv, pv, lens, d, b);
      const int64_t L = ch.L;
      double* dpart = partial ? pairwise_target(partial, d, b) : nullptr;
      if (L == 0) continue;
      const double *a = alpha + b * NK, *be = beta + b * NK;
      const T* v = dmu + b * NK;
      double *lf = left + b * NK, *r = right + b * NK;
      for (int64_t c = 0; c < K; ++c) lf[c] = 0, r[(L - 1) * K + c] = 0;
      for (int64_t i = 0; i + 1 < L; ++i)
        for (int64_t c1 = 0; c1 < K; ++c1) {
          const double log_in = a[(i + 1) * K + c1] - ch.unary(i + 1, c1);  // log Σ_c exp(α_i(c) + θ_i(c, c'))
          double acc = 0;
          for (int64_t c = 0; c < K; ++c)
            acc += std::exp(a[i * K + c] + ch.pair(i, c, c1) - log_in) * (double(v[i * K + c]) + lf[i * K + c]);
          lf[(i + 1) * K + c1] = acc;
        }
      for (int64_t i = L - 2; i >= 0; --i)
        for (int64_t c = 0; c < K; ++c) {
          double acc = 0;
          for (int64_t c1 = 0; c1 < K; ++c1)
            acc += std::exp(ch.pair(i, c, c1) + ch.unary(i + 1, c1) + be[(i + 1) * K + c1] - be[i * K + c]) *
                   (double(v[(i + 1) * K + c1]) + r[(i + 1) * K + c1]);
          r[i * K + c] = acc;
        }
      double es = 0;
      for (int64_t c = 0; c < K; ++c) es += std::exp(a[c] + be[c] - log_z[b]) * (double(v[c]) + r[c]);
      if (du)
        for (int64_t i = 0; i < L * K; ++i)
          du[b * NK + i] += T(std::exp(a[i] + be[i] - log_z[b]) * (double(v[i]) + lf[i] + r[i] - es));
      if (!dpw) continue;
      for (int64_t i = 0; i + 1 < L; ++i)
        for (int64_t c = 0; c < K; ++c)
          for (int64_t c1 = 0; c1 < K; ++c1) {
            const double xi = std::exp(log_pair_marginal(ch, a, be, log_z[b], i, c, c1));
            const double g = xi * (lf[i * K + c] + double(v[i * K + c]) + double(v[(i + 1) * K + c1]) +
                                   r[(i + 1) * K + c1] - es);
            if (dpart)
              dpart[c * K + c1] += g;
            else
              dpw[((b * (d.N - 1) + i) * K + c) * K + c1] += T(g);
          }
    }
    if (partial) sum_shared_pairwise(dpw, partial, d);
  });
  return mu;
}

#define LAVA_INSTANTIATE(T)                                                        \
  template Var<T> crf_log_partition(Var<T>, Var<T>, const int32_t*);               \
  template Var<T> crf_marginals(Var<T>, Var<T>, const int32_t*);
LAVA_INSTANTIATE(float)
LAVA_INSTANTIATE(double)

}  // namespace lava
