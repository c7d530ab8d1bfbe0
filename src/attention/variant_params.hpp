#pragma once
// What the variants beyond the paper's categorical ones add to a model, shared by every task: the hyperparameters
// that define the model (saved in its file, AttentionVariant::write_config), and the few parameters of their own
// (declared in the model's ParamStore under "attn/..." by AttentionVariant::declare_params, so checkpoints carry
// them). Hd is the width of the output head's memory part U (attention/output_head.hpp): every variant's random
// object lives in the space the head reads, so one implementation serves translation and VQA.
#include <map>
#include <string>

#include "attention/variant.hpp"
#include "nn/layers.hpp"

namespace lava {

struct VariantConfig {
  std::string alpha_transform = "exp";  // Dirichlet: α = exp(clamp(s, −10, 10)) | softplus(s)
  float k_weibull = 10.f;               // Weibull weights: shape k
  std::string bam_prior = "contextual";  // Bayesian attention modules: contextual (from the keys) | fixed prior
  float alpha_gamma = 1.f, beta_gamma = 1.f;  // Weibull weights: Gamma prior shape (fixed) and rate
  float sigma_q = 0.5f, sigma_p = 1.f;        // log-normal weights: posterior and prior σ of log S
  std::string gauss_prior = "mean";     // Gaussian context: N(mean of U, I) | N(0, I) ("zero")
  float crf_lambda = 2.f;               // linear-chain CRF: context Σ_i λ p_i U_i / Σ_i p_i
  int eval_samples = 10;                // sampled variants: K of the importance-weighted likelihood estimate
  float sparse_alpha = 2.f;             // sparse variants: α of α-entmax, 2 (sparsemax) or 1.5

  // The keys variant v reads (AttentionVariant::write_config).
  void to_metadata(AttnVariant v, std::map<std::string, std::string>& meta) const;
};

// Parameter ids in the store, −1 where the variant has no such parameter.
struct VariantParamIds {
  int sigma_W1 = -1, sigma_b1 = -1, sigma_W2 = -1, sigma_b2 = -1;  // Gaussian context: log σ's network
  int prior_W1 = -1, prior_b1 = -1, prior_w2 = -1, prior_b2 = -1;  // contextual prior of the weights' modules
  int crf_pairwise = -1;                                           // linear-chain CRF's pairwise scores
};

struct VariantVars {
  VariantConfig cfg;
  Var<float> sigma_W1, sigma_b1, sigma_W2, sigma_b2;
  Var<float> prior_W1, prior_b1, prior_w2, prior_b2;
  Var<float> crf_pairwise;
};

class VariantParams {
 public:
  VariantParams() = default;
  VariantParams(ParamStore<float>& ps, AttnVariant v, const VariantConfig& cfg, int Hd);
  VariantVars vars(Ctx& c) const;
  void set_eval_samples(int k) { cfg_.eval_samples = k; }  // `lava eval --eval-samples` on a loaded model

 private:
  VariantConfig cfg_;
  VariantParamIds ids_;
};

}  // namespace lava
