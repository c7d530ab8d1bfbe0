#pragma once
// Posterior collapse of a variational attention model during training: q(z | x, y) has fallen onto the prior
// p(z | x, x̃), so the alignment the inference network was meant to learn carries no information about y.
// Over one training epoch of N real target tokens the monitor takes the per-token means
//   KL = (1/N) Σ_n KL(q_n ‖ p_n),   H_q = (1/N) Σ_n H(q_n),   H_p = (1/N) Σ_n H(p_n)
// and calls the epoch collapsed when KL < kMaxKl nats per token and |H_q − H_p| ≤ kEntropyTolerance · H_p.
// (A q that equals p has KL = 0 and H_q = H_p; a q that follows y has H_q well below H_p and KL above 0.)
#include <string>

#include "core/json.hpp"

namespace lava {

struct CollapseVerdict {
  bool collapsed = false;
  double tokens = 0, kl = 0, q_entropy = 0, prior_entropy = 0;  // per-token means over the epoch
};

class CollapseMonitor {
 public:
  static constexpr double kMaxKl = 0.01, kEntropyTolerance = 0.01;

  // The criterion on means (per token, or per question): KL < kMaxKl and |H_q − H_p| ≤ kEntropyTolerance · H_p.
  static bool collapsed(double kl, double q_entropy, double prior_entropy);

  // One batch's sums over its real tokens (ObjectiveTerms::kl_sum, q_entropy_sum, prior_entropy_sum).
  void add(double kl_sum, double q_entropy_sum, double prior_entropy_sum, double tokens) {
    kl_ += kl_sum, hq_ += q_entropy_sum, hp_ += prior_entropy_sum, tokens_ += tokens;
  }
  // The verdict on the batches added since the last call; starts the next epoch. No tokens: not collapsed.
  CollapseVerdict end_epoch();

 private:
  double kl_ = 0, hq_ = 0, hp_ = 0, tokens_ = 0;
};

// The one-line warning, e.g. "lava train: epoch 3: q has collapsed onto the prior: KL(q||p) 0.0041 nats/token,
// H(q) 1.812 vs H(p) 1.820 ...".
std::string collapse_warning(const CollapseVerdict& v, int epoch);
// Its middle, for other callers: "q has collapsed onto the prior: KL(q||p) 0.0041 nats/UNIT (< 0.01), H(q) ...".
std::string collapse_text(const CollapseVerdict& v, const char* unit);

// What a task's validation line says about collapse, from the training sums since the last validation (a whole
// epoch unless --valid-every is set; they live in the loop's resume state, so a resumed epoch is judged whole):
// adds "q_collapsed" to `json` when there were tokens, and prints collapse_warning on stderr when collapsed.
void report_collapse(JsonLine& json, double kl_sum, double q_entropy_sum, double prior_entropy_sum, double tokens,
                     int epoch);

}  // namespace lava
