#pragma once
// A sequence VAE whose decoder attends to the encoder states (the seed document's model; Bowman et al. 2016 with
// the attention of Bahuleyan et al. 2018; method.md §3.3), for `lava train --task seqvae`:
//   encoder   BiLSTM (final forward state ‖ first backward state) or a pre-norm Transformer (masked mean) over the
//             sentence X = x_1..x_S -> memory (B, S, H) and a summary u (B, H)
//   q(z|X)    N(μ, diag σ²), μ = u W_μ + b_μ, log σ = u W_σ + b_σ; a global z of size Z; prior p(z) = N(0, I)
//   decoder   LSTM over [emb(x_{t−1}); z] (z at every step), h_t (B, T, Hd)
//   attention (--dec-attn soft) c_t = Σ_i α_ti m_i, α_t = softmax_i score(h_t, m_i) over the real positions,
//             score = additive vᵀ tanh(W_q h_t + W_k m_i) or multiplicative h_tᵀ W m_i; none: no context
//   output    p(x_t | x_<t, z, X) = softmax(W_g tanh(W_h h_t + W_c c_t + b) + b_g)
// ELBO(X) = E_q[log p(X | z)] − KL(q(z|X) ‖ N(0, I)), one reparameterised sample z = μ + σ ε per sentence.
// Because the decoder reads X's own encoder states, soft attention lets it copy X without using z at all: the
// bypass that drives KL to 0 (posterior collapse), which KL annealing and free bits are meant to counter.
//
// Sentences are batched like one side of a parallel corpus read twice (data/batcher.hpp): batch.src is X for the
// encoder, batch.tgt_in = <bos> X and batch.tgt_out = X <eos> for the decoder, so T = S + 1 tokens are predicted.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "data/batcher.hpp"
#include "nn/layers.hpp"
#include "nn/self_attention_encoder.hpp"

namespace lava {

enum class SeqVaeEncoder { lstm, transformer };
inline constexpr EnumName<SeqVaeEncoder> kSeqVaeEncoderNames[] = {{SeqVaeEncoder::lstm, "lstm"},
                                                                  {SeqVaeEncoder::transformer, "transformer"}};
enum class DecoderAttention { soft, none };
inline constexpr EnumName<DecoderAttention> kDecoderAttentionNames[] = {{DecoderAttention::soft, "soft"},
                                                                        {DecoderAttention::none, "none"}};
enum class SeqVaeScore { additive, multiplicative };  // Bahdanau MLP | Luong general
inline constexpr EnumName<SeqVaeScore> kSeqVaeScoreNames[] = {{SeqVaeScore::additive, "additive"},
                                                              {SeqVaeScore::multiplicative, "multiplicative"}};

struct SeqVaeConfig {
  SeqVaeEncoder encoder = SeqVaeEncoder::lstm;
  DecoderAttention dec_attn = DecoderAttention::soft;
  SeqVaeScore score = SeqVaeScore::additive;
  int vocab = 0;
  int emb = 128, hidden = 256, latent = 32, layers = 1, attn_size = 128;
  int heads = 4, tf_layers = 2, ff = 0;  // transformer encoder only (ff 0: 4·hidden)
  float dropout = 0.2f;

  std::map<std::string, std::string> to_metadata() const;
  static SeqVaeConfig from_metadata(const std::map<std::string, std::string>& meta, const std::string& file);
};

// The encoder's view of a batch: the memory the decoder attends to and the posterior's parameters.
struct SeqVaeEncoding {
  Var<float> memory;  // (B, S, H)
  Var<float> mu;      // (B, Z)
  Var<float> sigma;   // (B, Z), > 0
};

// The KL term as trained: weight · Σ_b KL_b, or with free bits λ > 0, weight · B · Σ_d max(λ, (1/B) Σ_b KL_bd)
// (Kingma et al. 2016: each dimension's batch-average KL below λ nats costs λ and gets no gradient).
struct KlOptions {
  float weight = 1.f;
  float free_bits = 0.f;
};

// One batch's training terms. Sums are over the batch's sentences (nats).
struct SeqVaeTerms {
  Var<float> loss;       // scalar to minimise: −Σ_b log p(X_b | z_b) + weight · KL term (as above)
  Var<float> z;          // (B, Z) the sample
  double recon = 0;      // Σ_b log p(X_b | z_b), z_b ~ q(z | X_b)
  double kl = 0;         // Σ_b KL(q(z | X_b) ‖ p(z)), exact
  double kl_trained = 0; // the KL term before the weight (= kl without free bits)
  int64_t tokens = 0;    // predicted tokens (words + <eos>)
};

class SeqVae {
 public:
  explicit SeqVae(const SeqVaeConfig& cfg);

  ParamStore<float> ps;
  const SeqVaeConfig& config() const { return cfg_; }
  // Every parameter uniform in [−a, a] (nn/params.hpp), as the other trainers do.
  void init(float a, uint64_t seed) { ps.init_uniform(a, seed); }

  SeqVaeEncoding encode(Ctx& c, const Batch& batch) const;
  // z = μ + σ ⊙ ε with ε[b·Z + d] = noise.normal(b·Z + d).
  Var<float> sample_z(const SeqVaeEncoding& enc, const CounterRng& noise) const;
  // log p(x_t | x_<t, z, X) per decoder position: (B, T), exactly 0 at padding.
  Var<float> token_log_probs(Ctx& c, const Batch& batch, const SeqVaeEncoding& enc, Var<float> z) const;
  // Encode, sample with `noise`, decode: the training loss and the ELBO's parts.
  SeqVaeTerms terms(Ctx& c, const Batch& batch, const CounterRng& noise, const KlOptions& kl) const;

 private:
  Var<float> summary(Ctx& c, const Batch& batch, Var<float> memory) const;  // u: (B, H)
  Var<float> attention_context(Ctx& c, const Batch& batch, Var<float> h, Var<float> memory) const;  // (B, T, H)

  SeqVaeConfig cfg_;
  int emb_ = -1;
  BiLstm lstm_encoder_;
  SelfAttentionEncoder tf_encoder_;
  Linear to_mu_, to_log_sigma_;
  std::vector<LstmLayer> decoder_;
  int score_q_ = -1, score_k_ = -1, score_v_ = -1;  // additive: (Hd, A), (H, A), (A, 1); multiplicative: W (Hd, H)
  Linear out_h_, out_c_, gen_;
};

// The KL term of KlOptions before the weight, from kl (B, Z) = KL per sentence and dimension: a scalar.
Var<float> kl_training_term(Var<float> kl, float free_bits);

// KL annealing (Bowman et al. 2016), linear: weight min(1, step / anneal_steps) for the update numbered `step`
// (0-based); 1 when anneal_steps == 0.
double kl_weight(int64_t step, int64_t anneal_steps);

// Active units (Burda et al. 2016): dimension d is active when Cov_X(E_q[z_d | X]) = Var_X(μ_d(X)) > threshold,
// the variance over the N sentences of an evaluation set, with the 1/N normalisation, computed in double with two
// passes in a fixed order. mu: (N, Z) row-major. `variances` (if given) receives the Z variances.
int count_active_units(const float* mu, int64_t N, int Z, double threshold, std::vector<double>* variances = nullptr);

}  // namespace lava
