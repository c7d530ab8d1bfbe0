#pragma once
// Linear-chain CRF over K states (K = 2 for the segmentation attention of Structured Attention Networks,
// [method.md §2.5]): for each batch row b with length L = lengths[b] (N when lengths is nullptr),
//   score(z) = Σ_{i<L} unary[b, i, z_i] + Σ_{i<L−1} θ_i(z_i, z_{i+1}),   p(z) = exp(score(z) − log Z),
// with θ_i = pairwise[b, i] for pairwise (B, N−1, K, K), or the same pairwise (K, K) at every position.
// Positions i ≥ L are padding: they take no part in the chain, their marginals are 0 and get no gradient.
// Start/end scores (SAN uses the mean of b) can be folded into unary[b, 0] and unary[b, L−1] by the caller.
//
// Both ops run forward–backward in log space (⊕ = logsumexp, ⊗ = +) with double-precision messages, one chain per
// thread iteration. The log-partition's backward is the marginals (∂ log Z/∂unary = p(z_i = c), ∂ log Z/∂θ_i(c, c') =
// p(z_i = c, z_{i+1} = c')); the marginals' backward is the Hessian of log Z applied to the incoming gradient,
// computed by one more linear-time pass (linear_chain_crf.cpp). Lengths must lie in [0, N]; they are copied.
#include <cstdint>

#include "autodiff/tape.hpp"

namespace lava {

// log Z per row: unary (B, N, K), pairwise (K, K) or (B, N−1, K, K) -> (B).
template <class T>
Var<T> crf_log_partition(Var<T> unary, Var<T> pairwise, const int32_t* lengths = nullptr);

// Unary marginals p(z_i = c) per row: same inputs -> (B, N, K), rows summing to 1 for i < L, 0 beyond.
template <class T>
Var<T> crf_marginals(Var<T> unary, Var<T> pairwise, const int32_t* lengths = nullptr);

}  // namespace lava
