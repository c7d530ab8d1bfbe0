#pragma once
// The translation model of the paper (paper-notes §1.1, as the authors coded it), for every attention variant:
//   encoder   bidirectional LSTM over source embeddings -> memory x_1..x_S (B, S, H)
//   decoder   LSTM; input at step j = [emb(y_{j−1}); c_{j−1}] where c_{j−1} = Σ_i p(z_{j−1} = i) x_i is the soft
//             context under the prior (input feeding), initial state zeros
//   prior     p(z_j = i | x, y_<j) = softmax_i score(h_j, x_i), score = MLP (Bahdanau) | general | dot
//   output    f(x, z = i)_y = softmax(W_gen tanh(W_out [h_j; x_i] + b) + b_gen)_y   (attention/output_head.hpp)
//   q         (var-*) q(z_j = i | x, y) ∝ exp((W h^tgt_j)ᵀ h^src_i), two separate BiLSTMs over source and the
//             whole target; only the word embeddings are shared with the generative model.
// Because input feeding uses the soft context, a sampled or enumerated z_j never changes later decoder states, so
// the per-token marginal Σ_i p(z_j = i) f_i is exact with O(S) enumeration per token.
#include <map>
#include <string>
#include <vector>

#include "attention/objective.hpp"
#include "data/batcher.hpp"
#include "nn/layers.hpp"

namespace lava {

struct Seq2SeqConfig {
  AttnVariant attn = AttnVariant::soft;
  std::string score = "mlp";  // mlp | general | dot
  int src_vocab = 0, tgt_vocab = 0;
  int emb = 128, hidden = 256, layers = 1, attn_size = 128, inf_hidden = 128;
  float dropout = 0.3f;

  std::map<std::string, std::string> to_metadata() const;
  static Seq2SeqConfig from_metadata(const std::map<std::string, std::string>& meta, const std::string& file);
};

// Per-token attention of one batch, for alignments and plots: (B, T, S) each, row-major.
struct AttentionMaps {
  int B = 0, T = 0, S = 0;
  std::vector<float> prior, posterior, q;  // q empty without an inference network
};

class Seq2Seq {
 public:
  explicit Seq2Seq(const Seq2SeqConfig& cfg);

  ParamStore<float> ps;
  const Seq2SeqConfig& config() const { return cfg_; }

  // Σ over the batch's target tokens of the variant's training objective (maximise), on c.tape.
  ObjectiveTerms objective(Ctx& c, const Batch& batch, const ObjectiveOptions& opt) const;
  // Exact evaluation sums (no gradients): log p(y|x), ELBO, KL, KL to the exact posterior, prior entropy.
  AttentionEvalSums evaluate(Ctx& c, const Batch& batch, int kmax) const;
  AttentionMaps attention_maps(Ctx& c, const Batch& batch) const;

 private:
  struct Forward {
    Var<float> memory;  // (B, S, H)
    AttentionDists dists;
    OutputHead head;
    std::vector<float> token_mask;  // (B, T)
  };
  Forward forward(Ctx& c, const Batch& batch) const;
  Var<float> inference_log_q(Ctx& c, const Batch& batch) const;

  Seq2SeqConfig cfg_;
  int src_emb_, tgt_emb_;
  BiLstm encoder_;
  struct DecoderLayer {
    int W_in, W_feed, W_hh, b;  // W_feed only for layer 0 (the input-fed context)
  };
  std::vector<DecoderLayer> decoder_;
  int score_q_ = -1, score_k_ = -1, score_v_ = -1;  // mlp: (Hd, A), (H, A), (A, 1); general: score_q_ (Hd, H)
  Linear out_h_, out_x_, gen_;
  BiLstm inf_src_, inf_tgt_;
  int inf_bilinear_ = -1;
};

}  // namespace lava
