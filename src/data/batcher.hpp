#pragma once
// Mini-batches of sentence pairs for the translation model.
//
// Training order (train_batches): every pair once per epoch, in batches of at most batch_size pairs of similar
// length, so that little of a batch is padding:
//   1. shuffle all pair indices (Fisher-Yates, CounterRng stream "batcher/pairs", child = epoch);
//   2. cut the shuffled list into windows of window_batches * batch_size pairs and sort each window by
//      (src_len, tgt_len, index);
//   3. cut each window into consecutive batches of batch_size (the last one of a window may be smaller);
//   4. shuffle the list of batches (stream "batcher/batches", child = epoch).
// The result is a pure function of (pairs' lengths, batch_size, window_batches, seed, epoch).
//
// Evaluation order (eval_batches): no shuffling; pairs sorted by (src_len, tgt_len, index) and cut into batches.
// Batch::index says which pairs a batch holds, so results can be written back in the original order.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "data/parallel_corpus.hpp"

namespace lava {

struct Batch {
  int B = 0, S = 0, T = 0;       // pairs; longest source; longest target + 1 (for <bos>/<eos>)
  std::vector<int32_t> src;      // (B,S) source ids, padded with <pad> = 0
  std::vector<int32_t> src_len;  // (B)   source lengths
  std::vector<uint8_t> src_mask;  // (B,S) 1 = padding, 0 = a real token
  std::vector<int32_t> tgt_in;   // (B,T) <bos> y1 .. y_n, then <pad>: the decoder's inputs
  std::vector<int32_t> tgt_out;  // (B,T) y1 .. y_n <eos>, then <pad>: what it must predict
  std::vector<int32_t> tgt_len;  // (B)   n + 1, the predicted positions of each row
  std::vector<int> index;        // (B)   which pairs (indices into the pairs vector)

  int64_t target_tokens() const;  // sum of tgt_len: the number of predicted tokens
};

// The padded tensors of the pairs pairs[index[0]], pairs[index[1]], ... in that order. Each index must be valid
// and every pair must have a non-empty source (LAVA_CHECK).
Batch make_batch(const std::vector<SentencePair>& pairs, std::span<const int> index);

struct BatchOptions {
  int batch_size = 64;       // pairs per batch, at most
  int window_batches = 100;  // the length-sorting window, in batches
};

// One training epoch: the pair indices of each batch, in the order to visit them.
std::vector<std::vector<int>> train_batches(const std::vector<SentencePair>& pairs, const BatchOptions& options,
                                            uint64_t seed, int64_t epoch);

// Fixed-size examples (VQA questions, captions): every index 0..count−1 once per epoch, shuffled (Fisher-Yates on
// CounterRng(seed, stream_id(stream)).child(epoch)) and cut into batches of batch_size in that order.
std::vector<std::vector<int>> shuffled_batches(int count, int batch_size, uint64_t seed, std::string_view stream,
                                               int64_t epoch);

// Evaluation: sorted by length, not shuffled.
std::vector<std::vector<int>> eval_batches(const std::vector<SentencePair>& pairs, int batch_size);

}  // namespace lava
