#pragma once
// What the wider family of attention variants (variant.hpp: var-dirichlet, gauss-ctx, bam-*, structured, sigmoid)
// adds to a model, shared by every task: the hyperparameters that define the model (saved in its file), and the few
// parameters of their own (declared in the model's ParamStore under "attn/...", so checkpoints carry them).
//   gauss-ctx       log σ = W2 tanh(W1 μ + b1) + b2 on the context mean μ        W1 (Hd, Hd), W2 (Hd, Hd)
//   bam-* (prior contextual)   g_i = w2ᵀ relu(W1 U_i + b1) + b2, π = softmax_i g   W1 (Hd, 10), w2 (10, 1)
//   structured      the CRF's pairwise scores b(z_i, z_{i+1})                     (2, 2)
// Hd is the width of the output head's memory part U (attention/output_head.hpp): every variant's random object
// lives in the space the head reads, so one implementation serves translation and VQA.
#include <map>
#include <string>

#include "attention/variant.hpp"
#include "nn/layers.hpp"

namespace lava {

struct VariantConfig {
  std::string alpha_transform = "exp";  // var-dirichlet: α = exp(clamp(s, −10, 10)) | softplus(s)
  float k_weibull = 10.f;               // bam-weibull: Weibull shape k
  std::string bam_prior = "contextual";  // bam-*: contextual (from the keys) | fixed
  float alpha_gamma = 1.f, beta_gamma = 1.f;  // bam-weibull: Gamma prior shape (fixed) and rate
  float sigma_q = 0.5f, sigma_p = 1.f;        // bam-lognormal: posterior and prior σ of log S
  std::string gauss_prior = "mean";     // gauss-ctx: N(mean of U, I) | N(0, I) ("zero")
  float crf_lambda = 2.f;               // structured: context Σ_i λ p_i U_i / Σ_i p_i
  int eval_samples = 10;                // sampled variants: K of the importance-weighted likelihood estimate

  // Only the keys the variant reads are written (older model files without them stay readable).
  void to_metadata(AttnVariant v, std::map<std::string, std::string>& meta) const;
};

struct VariantVars {
  VariantConfig cfg;
  Var<float> sigma_W1, sigma_b1, sigma_W2, sigma_b2;  // gauss-ctx
  Var<float> prior_W1, prior_b1, prior_w2, prior_b2;  // bam-* contextual prior
  Var<float> crf_pairwise;                            // structured
};

class VariantParams {
 public:
  VariantParams() = default;
  VariantParams(ParamStore<float>& ps, AttnVariant v, const VariantConfig& cfg, int Hd);
  VariantVars vars(Ctx& c) const;
  void set_eval_samples(int k) { cfg_.eval_samples = k; }  // `lava eval --eval-samples` on a loaded model

 private:
  VariantConfig cfg_;
  int sigma_W1_ = -1, sigma_b1_ = -1, sigma_W2_ = -1, sigma_b2_ = -1;
  int prior_W1_ = -1, prior_b1_ = -1, prior_w2_ = -1, prior_b2_ = -1;
  int crf_pairwise_ = -1;
};

}  // namespace lava
