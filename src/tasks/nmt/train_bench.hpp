#pragma once
// `lava bench train`: the speed of one training step of the translation model on random tokens, in the shape of
// the PyTorch peer (tools/bench-torch.py builds the same network): batch B of sentence pairs, every source of
// src_len words, every target of tgt_len predicted tokens (tgt_len − 1 words and </s>), vocabulary V on both sides.
// A step is forward, backward, clipping and Adam, exactly as lava train runs it; timings are the median over the
// timed steps after the warm-up steps. With init_model the network (sizes, vocabularies' sizes, attention variant and
// its hyperparameters) and its starting parameters come from a trained model file instead: the speed of a variant
// whose cost follows the data, such as a sparse support that shrinks as the model learns, once it has learnt.
#include <cstdint>
#include <string>
#include <vector>

#include "attention/variant.hpp"
#include "core/op_profile.hpp"

namespace lava {

struct TrainBenchOptions {
  AttnVariant attn;  // --attn's default unless set
  int emb = 256, hidden = 256, attn_size = 256, inf_hidden = 256, vocab = 10000;
  std::string init_model;  // a translation model file: its network and parameters replace the five sizes and attn
  std::string data;        // with init_model, a corpus folder: the steps visit the batches of one training epoch
                           // over its valid split instead of one batch of random words (src_len, tgt_len unused)
  int max_len = 0;         // with data: leave out the pairs with more tokens on a side (0: none), as lava train
  int batch = 32, src_len = 20, tgt_len = 20;
  int steps = 10, warmup = 2;
  uint64_t seed = 1;
  bool profile = false;  // then --steps more steps run under the op profile (core/op_profile.hpp)
};

struct TrainBenchResult {
  double step_seconds = 0;         // median over the timed steps (the mean with data: batches of several sizes)
  double tokens_per_s = 0;         // predicted tokens of a step / step_seconds (with data: of all timed steps)
  // The GEMM work below is counted only by a profiling build (make PROFILE=1); the product build leaves it 0.
  bool gemm_work_counted = false;
  double gflop_per_step = 0;       // GEMM work of one step (2·M·N·K summed; nearly all of a step's arithmetic)
  double gflops = 0;               // gflop_per_step / step_seconds
  double gemm_threaded_share = 0;  // of gflop_per_step, the part in GEMM calls split over threads
  // The output layer alone (linear_log_softmax_pick forward and backward; the enumerated layer of the enumerating
  // variants), over all timed steps: its GEMM work per step, its GFLOP/s while it runs (GEMM work over its whole wall
  // time, exp and log-sum-exp included) and its share of the step time (total over total, not a median).
  double output_gflop_per_step = 0;
  double output_gflops = 0;
  double output_step_share = 0;
  double peak_rss_mb = 0;          // the process's peak resident memory (getrusage), MiB
  double objective_per_token = 0;  // of the last step, to show the step computed something finite
  bool sparse = false;             // a sparse variant (AttnVariantInfo::sparse): support_per_token is its figure
  double support_per_token = 0;    // the mean support size per target token over the timed steps (sparse only)
  std::string attn_name;           // the variant that ran (the model file's with init_model)
  // With `profile`: the totals of every op kind over the profiled steps (after the timed ones, same data), how
  // many there were, and their median step time (the profile's own cost is that over step_seconds).
  std::vector<op_profile::KindTotals> profile;
  int profile_steps = 0;
  double profile_step_seconds = 0;
};

TrainBenchResult run_train_bench(const TrainBenchOptions& opt);

}  // namespace lava
