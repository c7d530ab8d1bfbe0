#pragma once
// The decoder's per-step word distribution over a mixture of output layers (the exact marginal of beam search).
#include <cstdint>

namespace lava {

// The word distribution of a step as a mixture of output layers, all words at once:
//   out[hyps[k], v] = log Σ_{r ∈ rows(k)} exp(logw_r) · softmax(o_r W + b)_v
//                   = logsumexp_r [ logw_r + (o_r W + b)_v − lse_r ],   lse_r = logsumexp_v (o_r W + b)_v
// (with logw the log prior over positions and o_r = tanh(A + U_s), the exact marginal; with one row of weight 1, a
// plain log-softmax). Computed in linear space, Σ_r (e^{logw_r} / Z_r) e^{l_rv − m_r}, with a vectorised exp; a
// word whose sum falls below 1e-30 (every term tiny) is recomputed in log space, so the tail stays exact too.
// Buffers: o (R, Hd), the rows of hypothesis hyps[k] at row_begin[k] .. row_begin[k+1]; logw (R); W (Hd, V); b (V);
// out (N, V), only rows hyps[0..nh) written; logits: scratch (chunk_rows, V), chunk_rows ≥ the rows of any one
// hypothesis. Chunks of whole hypotheses run in order and every output is reduced by one thread in a fixed order,
// so the result does not depend on the thread count.
void mixture_log_softmax(float* out, float* logits, const float* o, const float* logw, const int64_t* row_begin,
                         const int32_t* hyps, int64_t nh, const float* W, const float* b, int64_t Hd, int64_t V,
                         int64_t chunk_rows);

}  // namespace lava
