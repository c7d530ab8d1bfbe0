#pragma once
// Show, Attend and Tell on the 3x3 scenes (Xu et al. 2015), for every attention variant whose tasks include
// captioning: the categorical ones and SAT's own hard-attention estimator. S = 9 regions, T words per caption (with
// </s>).
//   annotations  a_i = relu(W_r r_i + b_r) of region i's features r_i                                 (B, S, Ha)
//   init         h_0 = tanh(W_h ā + b_h), c_0 = tanh(W_c ā + b_c), ā = mean_i a_i (one-layer MLPs)
//   attention    α_ti = softmax_i vᵀ tanh(W_q h_{t−1} + W_k a_i)                                     (B, T, S)
//   gate         β_t = σ(w_βᵀ h_{t−1} + b_β)
//   LSTM         gates read [E y_{t−1}; h_{t−1}; ẑ_t] with the soft context ẑ_t = β_t Σ_i α_ti a_i, for every
//                variant (the translation model's input feeding): a sampled or enumerated region s_t then changes
//                word t only, so log p(y | a) = Σ_t log Σ_i α_ti f(y_t | i) is exact.
//   deep output  f(y_t | z_t = i) = softmax(W_g tanh(E y_{t−1} + L_h h_t + L_z a_i) + b_g)  (attention/output_head.hpp:
//                A_q = E y_{t−1} + L_h h_t + b, U_i = L_z a_i; soft reads U at Σ_i α_ti a_i)
//   q            (with q) q(z_t = i | a, y) ∝ exp(uᵀ tanh(Q_h h_t + Q_y E y_t + Q_k a_i)), reading word t itself
//   penalty      λ Σ_b Σ_i (1 − Σ_t α_bti)² (attention/doubly_stochastic.hpp), subtracted from the objective
#include <map>
#include <string>
#include <vector>

#include "attention/objective.hpp"
#include "tasks/caption/data.hpp"

namespace lava {

struct CaptionConfig {
  AttnVariant attn;  // --attn's default unless set
  int words = 0, feature_dim = 0;
  int emb = 32, hidden = 64, annotation = 64, attn_size = 32;
  float dropout = 0.1f;  // on the word embeddings
  std::string attn_name() const { return variant_info(attn).name; }

  std::map<std::string, std::string> to_metadata() const;
  static CaptionConfig from_metadata(const std::map<std::string, std::string>& meta, const std::string& file);
};


struct CaptionObjective {
  ObjectiveOptions objective;
  SatHardOptions sat;
  float alpha_reg = 1.0f;  // λ of the doubly stochastic penalty (--alpha-reg)
};

struct CaptionTerms {
  Var<float> objective;  // to maximise: the variant's objective − λ · penalty
  double value_sum = 0, kl_sum = 0, penalty = 0;
  ObjectiveTerms attention;  // the variant's terms (a moving baseline reads their sampled words)
};

// The recurrent state between two decoder steps, for N rows.
struct CaptionState {
  Var<float> h, cell;  // (N, H)
};

class CaptionModel {
 public:
  explicit CaptionModel(const CaptionConfig& cfg);
  ParamStore<float> ps;
  const CaptionConfig& config() const { return cfg_; }

  // A moving-average reward baseline b (AttnVariantInfo::moving_baseline) lives in the store (parameter
  // "sat/baseline", gradient always 0, so Adam leaves it alone): checkpoints and resume states carry it with the
  // weights.
  float sat_baseline() const { return ps.values()[ps_offset_baseline()]; }
  void set_sat_baseline(float b) { ps.values()[ps_offset_baseline()] = b; }

  CaptionTerms objective(Ctx& c, const CaptionBatch& batch, const CaptionObjective& opt) const;
  // Exact evaluation sums of the references (no gradient): attention/objective.hpp's attention_eval_batch.
  AttentionEvalSums evaluate(Ctx& c, const CaptionBatch& batch) const;
  // The prior α (B, T, S) of teacher-forced references, row-major (no gradient).
  std::vector<float> attention(Ctx& c, const CaptionBatch& batch) const;

  // ---- decoding: `features` (N, S, D) one scene per row ----
  struct Encoded {
    int N = 0;
    Var<float> annotations, keys, out_memory;  // (N, S, Ha), (N, S, A), (N, S, E)
  };
  Encoded encode(Ctx& c, const float* features, int N) const;
  CaptionState initial_state(Ctx& c, const Encoded& enc) const;
  // One step fed prev_tokens (N): the new state, log α_t (N, S) and the next word's log-probabilities (N, V), the
  // exact marginal Σ_i α_ti f(· | i) for the latent variants, f at the soft context for soft.
  struct Step {
    CaptionState state;
    Var<float> log_alpha, scores, h;  // (N, S), (N, S), (N, H)
  };
  Step step(Ctx& c, const Encoded& enc, const CaptionState& prev, Var<float> prev_emb) const;
  std::vector<float> next_word_log_probs(Ctx& c, const Encoded& enc, const Step& s, Var<float> prev_emb) const;
  Var<float> embed(Ctx& c, const int32_t* tokens, const Shape& shape) const;

 private:
  struct Forward {
    AttentionDists dists;
    OutputHead head;
    Var<float> alpha;  // (B, T, S)
  };
  Forward forward(Ctx& c, const CaptionBatch& batch) const;
  size_t ps_offset_baseline() const { return ps.params()[size_t(baseline_)].offset; }

  CaptionConfig cfg_;
  int word_emb_ = -1, baseline_ = -1;
  Linear region_, init_h_, init_c_, att_q_, att_k_, beta_, out_h_, out_z_, gen_;
  int att_v_ = -1, lstm_in_ = -1, lstm_ctx_ = -1, lstm_hh_ = -1, lstm_b_ = -1;
  Linear q_h_, q_y_, q_k_;
  int q_v_ = -1;
};

}  // namespace lava
