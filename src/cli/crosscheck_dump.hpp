#pragma once
// What every `lava crosscheck-dump` task shares (cmd_crosscheck.cpp, crosscheck_tasks.cpp): the run's options, the
// tensors of the dump file, and the recorded Adam run.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attention/objective.hpp"
#include "cli/command_line.hpp"
#include "cli/variant_options.hpp"
#include "data/batcher.hpp"
#include "data/parallel_corpus.hpp"
#include "nn/optim.hpp"
#include "nn/safetensors.hpp"

namespace lava::crosscheck {

struct CrosscheckOptions {
  int steps = 200, batches = 4, batch_size = 3, src_len = 6, tgt_len = 6, kmax = 2;
  double lr = 3e-3, clip = 5, init = 0.5;
  uint64_t seed = 1;
};

void add_tensor(std::vector<NamedTensor>& out, std::string name, std::vector<int64_t> shape, const float* v);
template <class I>
void add_ints(std::vector<NamedTensor>& out, std::string name, std::vector<int64_t> shape, const std::vector<I>& v) {
  std::vector<float> f(v.begin(), v.end());
  add_tensor(out, std::move(name), std::move(shape), f.data());
}
void add_params(std::vector<NamedTensor>& out, const std::string& prefix, ParamStore<float>& ps, bool grads);
// Random sentence pairs: lengths uniform in [1, max], tokens uniform over the non-special ids.
std::vector<SentencePair> random_pairs(int n, int src_len, int tgt_len, int src_vocab, int tgt_vocab,
                                       const CounterRng& rng);
// A translation-style batch's five arrays as <prefix>src, src_len, tgt_in, tgt_out, tgt_len.
void add_batch(std::vector<NamedTensor>& out, const std::string& prefix, const Batch& b);
std::string eval_json(const AttentionEvalSums& s, int64_t correct);
// The variants tools/torch_reference.py implements: the paper's categorical ones (UsageError otherwise).
void check_covered(const CommandLine& cl, std::string_view task, AttnVariant v);
// The run's options in the metadata, then the file; one line on stderr.
void write_dump(const CommandLine& cl, const CrosscheckOptions& o, const ObjectiveOptions& obj,
                const std::string& path, const std::vector<NamedTensor>& out, std::map<std::string, std::string> meta,
                const std::vector<float>& loss);

// --steps Adam updates with dropout off, step t's objective from objective(ctx, t) -> (terms, rows of the batch),
// the loss normalised by the rows, clipped by global norm (as the trainers do). Records each step's loss, value and
// KL per row, its noise, and the gradient at step 0; returns the losses.
template <class Objective>
std::vector<float> train_and_record(std::vector<NamedTensor>& out, ParamStore<float>& ps, Tape<float>& tape,
                                    const CrosscheckOptions& o, ObjectiveOptions& obj, Objective objective) {
  Adam<float> adam;
  adam.lr = float(o.lr);
  std::vector<float> loss, value, kl, noise;
  for (int t = 0; t < o.steps; ++t) {
    tape.reset();
    Ctx c{tape, ps, true, CounterRng(o.seed, stream_id("crosscheck/train")).child(uint64_t(t)), 0.f};
    obj.step = t;
    obj.noise_out = &noise;
    noise.clear();
    const auto [terms, rows] = objective(c, t);
    Var<float> l = affine(terms.objective, -1.f / float(rows), 0.f);
    tape.backward(l);
    loss.push_back(l.item());
    value.push_back(float(terms.value_sum / rows));
    kl.push_back(float(terms.kl_sum / rows));
    if (!noise.empty()) add_tensor(out, "noise/" + std::to_string(t), {int64_t(noise.size())}, noise.data());
    if (t == 0) add_params(out, "grad/", ps, true);
    adam.step(ps, clip_factor(grad_norm(ps), float(o.clip)));
  }
  add_tensor(out, "loss", {int64_t(loss.size())}, loss.data());
  add_tensor(out, "value", {int64_t(value.size())}, value.data());
  add_tensor(out, "kl", {int64_t(kl.size())}, kl.data());
  return loss;
}

// --alpha: the sparse variants' α-entmax, 2 or 1.5.
float sparse_alpha(const CommandLine& cl);
// The three tasks' dumps (TaskCrosscheck::dump).
int dump_nmt(const CommandLine& cl, const CrosscheckOptions& o, const std::string& out_path);
int dump_vqa(const CommandLine& cl, const CrosscheckOptions& o, const std::string& out_path);
int dump_seqvae(const CommandLine& cl, const CrosscheckOptions& o, const std::string& out_path);

}  // namespace lava::crosscheck
