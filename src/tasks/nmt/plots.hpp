#pragma once
// Pictures of a translation run (`lava train --plot DIR`), each an SVG written atomically (report/svg.hpp):
//   DIR/learning-curves.svg  per target token against epochs: train −objective (−log p or −ELBO, as the variant
//                            trains), valid −log p(y|x) and valid −ELBO
//   DIR/kl.svg               per target token against epochs: valid KL gap log p − ELBO, valid KL(q‖p) and train
//                            KL(q‖p) (a separate picture: they are far smaller than the bounds)
//   DIR/attention-K.svg      validation sentence K = 1..4 (the first pairs of the split, in corpus order): the prior
//                            p(z_j | x, y_<j) beside the exact posterior p(z_j | x, y) ∝ p(z_j) f(x, z_j)_{y_j},
//                            target words and <eos> on the rows, source words on the columns
//   DIR/attention-K-q.svg    the same sentence: the inference network's q(z_j | x, y) beside the exact posterior
//                            (variants with q only; their difference is the KL gap)
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/parallel_corpus.hpp"
#include "tasks/nmt/seq2seq.hpp"

namespace lava {

// A few sentence pairs with their words, for attention pictures.
struct AttentionExamples {
  std::vector<SentencePair> pairs;
  std::vector<std::vector<std::string>> src_words;  // per pair: the source tokens (columns)
  std::vector<std::vector<std::string>> tgt_words;  // per pair: the target tokens and <eos> (rows: what is predicted)
};

// The first `count` pairs of a split read with keep_source_tokens and keep_target_tokens (LAVA_CHECK).
AttentionExamples attention_examples(const ParallelSplit& split, int count);

// attention-K.svg (and attention-K-q.svg) for every example, under the model's current parameters, evaluated
// without dropout; `caption` says when (e.g. "after epoch 3, step 120").
void write_attention_plots(const std::string& dir, Seq2Seq& model, const AttentionExamples& examples,
                           std::string_view caption);

}  // namespace lava
