#pragma once
// The score given to padded or excluded positions before a softmax: exp(-1e9 - max) is exactly 0 in float, so their
// probability is 0 and 0 · log 0 never appears, while the value stays finite (no inf - inf = NaN in the backward
// pass). Shared by the attention objectives, the models' scorers and the self-attention encoder.
namespace lava {

constexpr float kMaskedLogit = -1e9f;

}  // namespace lava
