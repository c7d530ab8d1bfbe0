#include "data/batcher.hpp"

#include <algorithm>
#include <numeric>

#include "core/check.hpp"
#include "core/rng.hpp"

namespace lava {

int64_t Batch::target_tokens() const {
  int64_t n = 0;
  for (int32_t len : tgt_len) n += len;
  return n;
}

Batch make_batch(const std::vector<SentencePair>& pairs, std::span<const int> index) {
  Batch b;
  b.B = int(index.size());
  for (int k : index) {
    LAVA_CHECK(k >= 0 && size_t(k) < pairs.size(), "pair index {} outside [0, {})", k, pairs.size());
    LAVA_CHECK(!pairs[size_t(k)].src.empty(), "pair {} (line {}) has an empty source", k, pairs[size_t(k)].line);
    b.S = std::max(b.S, int(pairs[size_t(k)].src.size()));
    b.T = std::max(b.T, int(pairs[size_t(k)].tgt.size()) + 1);
  }
  const size_t B = size_t(b.B), S = size_t(b.S), T = size_t(b.T);
  b.src.assign(B * S, Vocab::kPad);
  b.src_mask.assign(B * S, 1);
  b.src_len.resize(B);
  b.tgt_in.assign(B * T, Vocab::kPad);
  b.tgt_out.assign(B * T, Vocab::kPad);
  b.tgt_len.resize(B);
  b.index.assign(index.begin(), index.end());
  for (size_t r = 0; r < B; ++r) {
    const SentencePair& p = pairs[size_t(index[r])];
    const size_t n_src = p.src.size(), n = p.tgt.size();
    std::copy(p.src.begin(), p.src.end(), b.src.begin() + long(r * S));
    std::fill_n(b.src_mask.begin() + long(r * S), n_src, uint8_t(0));
    b.src_len[r] = int32_t(n_src);
    // Teacher forcing: row r predicts tgt_out[r, t] = y_{t+1} (or <eos> at t = n) from tgt_in[r, 0..t] = <bos> y_1..y_t.
    int32_t* in = b.tgt_in.data() + r * T;
    int32_t* out = b.tgt_out.data() + r * T;
    in[0] = Vocab::kBos;
    std::copy(p.tgt.begin(), p.tgt.end(), in + 1);
    std::copy(p.tgt.begin(), p.tgt.end(), out);
    out[n] = Vocab::kEos;
    b.tgt_len[r] = int32_t(n + 1);
  }
  return b;
}

namespace {

// Length order with the index as the last key, so equal lengths cannot make the order depend on the sort algorithm.
void sort_by_length(const std::vector<SentencePair>& pairs, std::vector<int>::iterator first,
                    std::vector<int>::iterator last) {
  std::sort(first, last, [&](int a, int b) {
    const SentencePair &pa = pairs[size_t(a)], &pb = pairs[size_t(b)];
    if (pa.src.size() != pb.src.size()) return pa.src.size() < pb.src.size();
    if (pa.tgt.size() != pb.tgt.size()) return pa.tgt.size() < pb.tgt.size();
    return a < b;
  });
}

// Fisher-Yates: position i swaps with a uniform j in [0, i], drawn from counter i.
template <class T>
void shuffle(std::vector<T>& v, const CounterRng& rng) {
  for (size_t i = v.size(); i-- > 1;) std::swap(v[i], v[size_t(rng.below(i, i + 1))]);
}

void check_batch_size(int batch_size) {
  if (batch_size < 1) throw UsageError(fmt::format("batch size must be at least 1, got {}", batch_size));
}

}  // namespace

std::vector<std::vector<int>> train_batches(const std::vector<SentencePair>& pairs, const BatchOptions& options,
                                            uint64_t seed, int64_t epoch) {
  check_batch_size(options.batch_size);
  if (options.window_batches < 1)
    throw UsageError(fmt::format("batching window must be at least 1 batch, got {}", options.window_batches));
  LAVA_CHECK(pairs.size() <= size_t(INT32_MAX), "{} pairs do not fit int indices", pairs.size());
  std::vector<int> order(pairs.size());
  std::iota(order.begin(), order.end(), 0);
  shuffle(order, CounterRng(seed, stream_id("batcher/pairs")).child(uint64_t(epoch)));

  const size_t batch = size_t(options.batch_size);
  const size_t window = batch * size_t(options.window_batches);
  std::vector<std::vector<int>> batches;
  batches.reserve((order.size() + batch - 1) / batch + order.size() / window + 1);
  for (size_t w0 = 0; w0 < order.size(); w0 += window) {
    size_t w1 = std::min(order.size(), w0 + window);
    sort_by_length(pairs, order.begin() + long(w0), order.begin() + long(w1));
    for (size_t b0 = w0; b0 < w1; b0 += batch)
      batches.emplace_back(order.begin() + long(b0), order.begin() + long(std::min(w1, b0 + batch)));
  }
  shuffle(batches, CounterRng(seed, stream_id("batcher/batches")).child(uint64_t(epoch)));
  return batches;
}

std::vector<std::vector<int>> eval_batches(const std::vector<SentencePair>& pairs, int batch_size) {
  check_batch_size(batch_size);
  std::vector<int> order(pairs.size());
  std::iota(order.begin(), order.end(), 0);
  sort_by_length(pairs, order.begin(), order.end());
  std::vector<std::vector<int>> batches;
  for (size_t b0 = 0; b0 < order.size(); b0 += size_t(batch_size))
    batches.emplace_back(order.begin() + long(b0), order.begin() + long(std::min(order.size(), b0 + size_t(batch_size))));
  return batches;
}

std::vector<std::vector<int>> shuffled_batches(int count, int batch_size, uint64_t seed, std::string_view stream,
                                               int64_t epoch) {
  LAVA_CHECK(batch_size > 0, "batch size {}", batch_size);
  std::vector<int> order(size_t(std::max(count, 0)));
  for (int i = 0; i < count; ++i) order[size_t(i)] = i;
  const CounterRng rng = CounterRng(seed, stream_id(stream)).child(uint64_t(epoch));
  for (int i = count - 1; i > 0; --i) std::swap(order[size_t(i)], order[size_t(rng.below(uint64_t(i), uint64_t(i) + 1))]);
  std::vector<std::vector<int>> batches;
  for (int at = 0; at < count; at += batch_size)
    batches.emplace_back(order.begin() + at, order.begin() + std::min(count, at + batch_size));
  return batches;
}

}  // namespace lava
