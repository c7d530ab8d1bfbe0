#pragma once
// Decoding for the translation model (method.md §4.2, as the authors' decoder ran it).
//
// Each step's word distribution is the exact marginal under the prior, log p(y_j = v) = logsumexp_s [log p(z_j = s)
// + log f(x, e_s)_v] for every latent variant, and log f(x, E_p z)_v for soft/none (Seq2Seq::next_word_log_probs);
// K-max restricts the prior to its top K positions first. The search:
//   - end-of-sentence normalisation: when choosing output token j (j − 1 tokens already chosen), the EOS
//     log-probability is lowered by eos_norm · src_len / (j + 1) (OpenNMT's cur_len = len(next_ys) = j);
//   - beam: every step, each live hypothesis proposes its K best words; the K best candidates by accumulated score
//     (log-probabilities with the EOS penalty, not length-normalised) are kept. A kept candidate ending in </s> is
//     finished and leaves the beam, so the next step expands fewer live hypotheses (a finished one has no
//     children); the search stops when the best candidate of a step is </s> or none is live;
//   - finished hypotheses are ranked by score / lp(Y), the GNMT length penalty lp(Y) = ((5 + |Y|) / 6)^alpha with
//     |Y| the number of output tokens including </s> (OpenNMT-py counted <bos> too, so its |Y| is one larger);
//   - a hypothesis with max_len(src) = floor(max_len_ratio · src_len) + max_len_extra words may only end: </s>;
//   - <pad> and <bos> are never produced (they are never targets); ties go to the lower slot, then the lower word id.
// beam = 1 is greedy decoding. Batches of sentences are decoded together; sentences leave the batch once done.
// No gradient is recorded, and the result does not depend on the thread count.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tasks/nmt/seq2seq.hpp"
#include "tensor/kernels_mixture.hpp"

namespace lava {

struct DecodeOptions {
  int beam = 10;               // K; 1 = greedy
  double alpha = 1.0;          // length penalty exponent; 0 = ranking by raw score
  double eos_norm = 3.0;       // 0 = off
  double max_len_ratio = 2.0;  // max_len(src) = floor(max_len_ratio · src_len) + max_len_extra
  int max_len_extra = 10;
  int kmax = 0;                // K-max prior (0 = every position)
  int batch_size = 16;         // sentences decoded together
};

struct Translation {
  std::vector<int32_t> tokens;  // target ids, without </s>
  double log_prob = 0;          // log p(y_1..y_n, </s> | x) under the decoding distribution (no penalties)
  double score = 0;             // what the search ranked by: (log_prob − EOS penalty) / lp(Y)
};

double length_penalty(int output_tokens, double alpha);  // ((5 + |Y|) / 6)^alpha, |Y| including </s>
double eos_penalty(double eos_norm, int src_len, int j);  // eos_norm · src_len / (j + 1), for output token j ≥ 1
int max_output_words(int src_len, const DecodeOptions& opt);

// The model is not changed (it is non-const because the tape reads parameters through ParamStore::var).
// Beam search (opt.beam ≥ 1) over sources (non-empty id sequences of the model's source vocabulary) decoded as one
// batch; results in the order of `sources`.
std::vector<Translation> beam_search(Seq2Seq& model, const std::vector<std::vector<int32_t>>& sources,
                                     const DecodeOptions& opt);

// Every sentence of a corpus: sorted by source length into batches of opt.batch_size, decoded by beam_search, and
// returned in input order. An empty source gives an empty translation. `on_batch(done)` reports progress.
std::vector<Translation> translate_corpus(Seq2Seq& model, const std::vector<std::vector<int32_t>>& sources,
                                          const DecodeOptions& opt,
                                          const std::function<void(int64_t done)>& on_batch = {});


// The output line: target tokens joined by spaces, then BPE "@@ " markers joined (join_bpe).
std::string translation_text(const Translation& t, const Vocab& tgt_vocab);

}  // namespace lava
