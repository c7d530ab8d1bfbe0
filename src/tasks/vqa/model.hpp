#pragma once
// The VQA model of the paper (method.md §3.1), for every attention variant (attention/variant.hpp), with one
// query per question (T = 1) and the R regions of its image as the candidates (S = R):
//   question  x̃ = h_L, the last state of a one-layer LSTM over the question's word embeddings        (B, H)
//   regions   x_i = relu(W_r r_i + b_r), a learned projection of region i's features r_i            (B, R, H)
//   prior     p(z = i | x, x̃) = softmax_i( wᵀ tanh(W1 x_i + W2 x̃) )                                 (B, 1, R)
//             (`none`: the uniform 1/R, a fixed average of the regions)
//   output    f(x, z = i) = softmax( W_g relu(A_q + U_i) + b_g ) over answers, A_q = W_q x̃ + b_q, U_i = W_x x_i:
//             the one-hidden-layer answer MLP on [x_i; x̃] (attention/output_head.hpp with relu = true), dropout on
//             its hidden layer
//   q         (with q) q(z = i | x, x̃, y) ∝ exp( uᵀ tanh( U1 (x_i ⊙ relu(V1 h_y)) + U2 (x̃ ⊙ relu(V2 h_y)) ) ),
//             h_y an embedding of the answer y. It reads the generative model's x_i and x̃ (so the KL and the
//             ELBO also shape those), with parameters of its own otherwise.
// The objectives and evaluation figures are attention/objective.hpp's; this file only builds the distributions.
#include <map>
#include <string>
#include <vector>

#include "attention/objective.hpp"
#include "tasks/vqa/data.hpp"
#include "nn/layers.hpp"

namespace lava {

struct VqaConfig {
  AttnVariant attn;  // --attn's default unless set
  int words = 0, answers = 0;       // question-word and answer vocabulary sizes
  int regions = 0, feature_dim = 0;  // R and D of the region features the model reads
  int emb = 64;                     // word embedding size
  int hidden = 128;                 // question LSTM size = region projection size (x̃ and x_i)
  int attn_size = 64;               // hidden size of the prior's and q's scoring MLPs
  int mlp = 128;                    // hidden size of the answer MLP
  int answer_emb = 64;              // q: size of the answer embedding h_y
  float dropout = 0.1f;             // on the answer MLP's hidden layer
  VariantConfig variant;            // the wider family's hyperparameters (attention/variant_params.hpp)

  std::map<std::string, std::string> to_metadata() const;
  static VqaConfig from_metadata(const std::map<std::string, std::string>& meta, const std::string& file);
};

// Everything evaluation needs about one batch, computed without gradients, as plain arrays (row-major).
struct VqaScores {
  int B = 0, R = 0, V = 0;
  std::vector<float> log_prior;  // (B, R) log p(z = i | x, x̃)
  std::vector<float> log_q;      // (B, R) log q(z = i | x, x̃, y); empty without an inference network
  std::vector<float> log_f;      // (B, R, V) log f(x, z = i)_v for every region i and answer v
  std::vector<float> log_soft;   // (B, V) log f(x, Σ_i w_i e_i)_v at attention_weights() (the variants that are
                                 // not enumerated); empty for the latent variants
  AttentionEvalSums sampled;     // the sampled variants' importance-weighted figures (continuous.hpp)
};

class VqaModel {
 public:
  explicit VqaModel(const VqaConfig& cfg);

  ParamStore<float> ps;
  const VqaConfig& config() const { return cfg_; }
  // The K of the sampled variants' importance-weighted likelihood (VariantConfig::eval_samples), e.g. from
  // `lava eval --eval-samples`.
  void set_eval_samples(int k) { cfg_.variant.eval_samples = k, variant_params_.set_eval_samples(k); }

  // Σ over the batch's questions with a known answer of the variant's training objective (maximise), on c.tape.
  ObjectiveTerms objective(Ctx& c, const VqaBatch& batch, const ObjectiveOptions& opt) const;
  // The distributions of every question of the batch (no gradient; q only where the answer is known, else the
  // prior is copied in its place).
  VqaScores scores(Ctx& c, const VqaBatch& batch) const;

 private:
  struct Forward {
    Var<float> question;  // x̃: (B, H)
    Var<float> regions;   // x_i: (B, R, H)
    AttentionDists dists;  // (B, 1, R) each
    OutputHead head;
  };
  Forward forward(Ctx& c, const VqaBatch& batch) const;
  // The prior's and q's scores before the softmax: (B, 1, R).
  Var<float> prior_scores(Ctx& c, Var<float> question, Var<float> regions, int B) const;
  Var<float> inference_scores(Ctx& c, Var<float> question, Var<float> regions, const VqaBatch& batch) const;

  VqaConfig cfg_;
  int word_emb_ = -1;
  LstmLayer question_lstm_;
  Linear region_proj_;
  int prior_W1_ = -1, prior_W2_ = -1, prior_w_ = -1;  // (H, A), (H, A), (A, 1)
  Linear out_q_, out_x_, gen_;                         // A_q = x̃ W_q + b_q; U_i = x_i W_x; W_g, b_g
  int answer_emb_ = -1, inf_V1_ = -1, inf_V2_ = -1, inf_U1_ = -1, inf_U2_ = -1, inf_u_ = -1;
  VariantParams variant_params_;
};

}  // namespace lava
