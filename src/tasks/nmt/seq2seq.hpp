#pragma once
// The translation model of the paper (method.md §1, as the authors coded it), for every attention variant:
//   encoder   bidirectional LSTM over source embeddings -> memory x_1..x_S (B, S, H) (or, as a diagnostic,
//             x_i = tanh(W e(x_i) + b): Seq2SeqConfig::encoder)
//   decoder   LSTM; input at step j = [emb(y_{j−1}); c_{j−1}] where c_{j−1} = Σ_i p(z_{j−1} = i) x_i is the soft
//             context under the prior (input feeding), initial state zeros
//   prior     p(z_j = i | x, y_<j) = softmax_i score(h_j, x_i), score = MLP (Bahdanau) | general | dot
//   output    f(x, z = i)_y = softmax(W_gen tanh(W_out [h_j; x_i] + b) + b_gen)_y   (attention/output_head.hpp)
//   q         (with q) q(z_j = i | x, y) ∝ exp((W h^tgt_j)ᵀ h^src_i), two separate BiLSTMs over source and the
//             whole target; only the word embeddings are shared with the generative model.
// Because input feeding uses the soft context, a sampled or enumerated z_j never changes later decoder states, so
// the per-token marginal Σ_i p(z_j = i) f_i is exact with O(S) enumeration per token.
//
// Decoding (method.md §4.2) runs the same decoder step as training, one token at a time: encode() once per batch
// of source sentences, initial_state(), then decoder_step() and next_word_log_probs() per output position, for a
// set of hypotheses of which each reads one source sentence (hypothesis n reads sentence n / K, K hypotheses per
// sentence; the teacher-forced forward is the case K = 1 with the reference tokens as inputs).
#include <map>
#include <string>
#include <vector>

#include "attention/objective.hpp"
#include "core/enum_names.hpp"
#include "data/batcher.hpp"
#include "nn/layers.hpp"

namespace lava {

// The prior's scorer: vᵀ tanh(W_q h + W_k x_i) (Bahdanau), hᵀ W x_i (Luong general) or hᵀ x_i.
enum class NmtScore { mlp, general, dot };
inline constexpr EnumName<NmtScore> kNmtScoreNames[] = {
    {NmtScore::mlp, "mlp"}, {NmtScore::general, "general"}, {NmtScore::dot, "dot"}};
// bilstm: the paper's bidirectional LSTM; embedding: x_i = tanh(W e(x_i) + b), a memory that holds each word and
// nothing of its neighbours, so that f(x, z = i) depends on word i alone and an alignment is identifiable (a
// diagnostic for alignment studies: with a contextual memory, a shifted alignment can explain y equally well).
enum class NmtEncoder { bilstm, embedding };
inline constexpr EnumName<NmtEncoder> kNmtEncoderNames[] = {{NmtEncoder::bilstm, "bilstm"},
                                                            {NmtEncoder::embedding, "embedding"}};

struct Seq2SeqConfig {
  AttnVariant attn;  // --attn's default unless set
  NmtScore score = NmtScore::mlp;
  NmtEncoder encoder = NmtEncoder::bilstm;
  int src_vocab = 0, tgt_vocab = 0;
  int emb = 128, hidden = 256, layers = 1, attn_size = 128, inf_hidden = 128;
  float dropout = 0.3f;
  VariantConfig variant;  // the wider family's hyperparameters (attention/variant_params.hpp)

  std::map<std::string, std::string> to_metadata() const;
  static Seq2SeqConfig from_metadata(const std::map<std::string, std::string>& meta, const std::string& file);
};

// Per-token attention of one batch, for alignments and plots: (B, T, S) each, row-major.
struct AttentionMaps {
  int B = 0, T = 0, S = 0;
  std::vector<float> prior, posterior, q;  // q empty without an inference network
};

// The source side of a batch, encoded once: everything the decoder reads at every step.
struct EncodedSource {
  int B = 0, S = 0;
  Var<float> memory;             // X = x_1..x_S: (B, S, H)
  Var<float> keys;               // mlp scorer: x_i W_k, (B, S, A); empty for general, dot and none
  Var<float> out_memory;         // U_i = x_i W_x, the memory's part of the output layer: (B, S, Hd)
  std::vector<uint8_t> mask;     // (B, S) 1 = padding
  std::vector<int32_t> lengths;  // (B) source lengths
  // Decoder weights read at every step, packed once for this pass (pack_weight): W_hh of each layer, W_feed of
  // layer 0 and the scorer's query map (size 1; W_q none for dot and none). Empty when the encoding was rebuilt on
  // another tape (beam search); steps then read the weights themselves.
  std::vector<PackedWeight<float>> W_hh, W_feed, W_q;
};

// The recurrent state of N hypotheses between two decoder steps.
struct DecoderState {
  std::vector<Var<float>> h, cell;  // per layer: (N, Hd)
  Var<float> context;               // (N, H): c_{j−1} = Σ_i p(z_{j−1} = i) x_i, fed into step j
};

struct DecoderStep {
  DecoderState state;    // after step j
  Var<float> log_prior;  // (N, S): log p(z_j = i | x, y_<j), padded positions at kMaskedLogit
  Var<float> scores;     // (N, S): the prior's scores before the softmax, padded positions at kMaskedLogit
  Var<float> top;        // (N, Hd): h_j of the top decoder layer, the query
};

class Seq2Seq {
 public:
  explicit Seq2Seq(const Seq2SeqConfig& cfg);

  ParamStore<float> ps;
  const Seq2SeqConfig& config() const { return cfg_; }
  // The K of the sampled variants' importance-weighted likelihood (VariantConfig::eval_samples), e.g. from
  // `lava eval --eval-samples`.
  void set_eval_samples(int k) { cfg_.variant.eval_samples = k, variant_params_.set_eval_samples(k); }

  // Σ over the batch's target tokens of the variant's training objective (maximise), on c.tape.
  ObjectiveTerms objective(Ctx& c, const Batch& batch, const ObjectiveOptions& opt) const;
  // Exact evaluation sums (no gradients): log p(y|x), ELBO, KL, KL to the exact posterior, prior entropy.
  AttentionEvalSums evaluate(Ctx& c, const Batch& batch, int kmax) const;
  AttentionMaps attention_maps(Ctx& c, const Batch& batch) const;

  // ---- incremental decoding (the teacher-forced forward runs these same steps) ----
  // Encoder memory, scorer keys and U for the batch's source side (batch.src, src_len, src_mask, B, S).
  EncodedSource encode(Ctx& c, const Batch& batch) const;
  // Zero state for N hypotheses (the decoder starts from zeros, as the authors' did).
  DecoderState initial_state(Ctx& c, int N) const;
  // One step for N = enc.B · K hypotheses; hypothesis n reads source sentence n / K and was fed prev_tokens[n]
  // (<bos> at the first step): input [emb(y_{j−1}); c_{j−1}] -> LSTM stack -> prior over source positions.
  DecoderStep decoder_step(Ctx& c, const EncodedSource& enc, int K, const DecoderState& prev,
                           const int32_t* prev_tokens) const;
  // log p(y_j = v | x, y_<j) for every word v and every hypothesis n with live[n] != 0 (live == nullptr: all), into
  // out (N, V) row-major; rows of other hypotheses are left untouched. No gradient (run under NoGrad).
  //   latent variants: the exact marginal  logsumexp_s [ log p(z_j = s) + log f(x, e_s)_v ]
  //   soft, none:      log f(x, E_p[z])_v  (f at the soft context Σ_s p_s x_s)
  // kmax > 0 first restricts the prior to its kmax largest positions (ties: the lower position) and renormalises,
  // as `lava eval --kmax` does (for soft the context then averages over those positions; `none` ignores kmax).
  void next_word_log_probs(Ctx& c, const EncodedSource& enc, int K, const DecoderStep& step, int kmax,
                           const uint8_t* live, float* out) const;
  // The number of real target tokens of the batch that are the argmax (ties: the lowest id) of the same word
  // distribution next_word_log_probs gives, teacher-forced: token accuracy.
  int64_t count_correct(Ctx& c, const Batch& batch, int kmax) const;

 private:
  struct Forward {
    Var<float> memory;  // (B, S, H)
    AttentionDists dists;
    OutputHead head;
    std::vector<float> token_mask;  // (B, T)
  };
  Forward forward(Ctx& c, const Batch& batch) const;
  // The step from the first layer's input part of the gates, in0 = emb(y_{j−1}) W_in + b: (N, 4Hd).
  DecoderStep step_from_input(Ctx& c, const EncodedSource& enc, int K, const DecoderState& prev,
                              Var<float> in0) const;
  // next_word_log_probs for N rows of which row n reads source sentence n / K: A (N, Hd) the query's part of the
  // output layer, U (B, S, Hd) the memory's part, lp (N, S) the log prior, out (N, V).
  // lp holds log weights; normalise: renormalise them over the real (and top-kmax) positions first.
  void word_log_probs(Ctx& c, const float* A, const float* U, const float* lp, int N, int K, int S, int kmax,
                      bool normalise, const uint8_t* live, float* out) const;
  Var<float> inference_scores(Ctx& c, const Batch& batch) const;  // q's scores before the softmax, (B, T, S)
  // The log weights the word distribution reads (attention_weights(): the prior for most variants) for the prior
  // and scores of d, and whether they are a normalised distribution (AttnVariantInfo::weights_normalised).
  std::pair<Var<float>, bool> test_log_weights(Ctx& c, AttentionDists d) const;
  EncodedSource encode_memory(Ctx& c, const Batch& batch) const;  // X, mask, lengths (no keys, no U)
  Var<float> scorer_keys(Ctx& c, Var<float> memory) const;        // mlp: X W_k; empty otherwise
  void pack_decoder_weights(Ctx& c, EncodedSource& enc) const;    // enc.W_hh, enc.W_feed, enc.W_q

  Seq2SeqConfig cfg_;
  int src_emb_, tgt_emb_;
  BiLstm encoder_;
  Linear embed_memory_;  // encoder = embedding
  struct DecoderLayer {
    int W_in, W_feed, W_hh, b;  // W_feed only for layer 0 (the input-fed context)
  };
  std::vector<DecoderLayer> decoder_;
  int score_q_ = -1, score_k_ = -1, score_v_ = -1;  // mlp: (Hd, A), (H, A), (A, 1); general: score_q_ (Hd, H)
  Linear out_h_, out_x_, gen_;
  BiLstm inf_src_, inf_tgt_;
  int inf_bilinear_ = -1;
  VariantParams variant_params_;
};

}  // namespace lava
