#include "attention/collapse_monitor.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace lava {

CollapseVerdict CollapseMonitor::end_epoch() {
  CollapseVerdict v;
  v.tokens = tokens_;
  if (tokens_ > 0) {
    v.kl = kl_ / tokens_, v.q_entropy = hq_ / tokens_, v.prior_entropy = hp_ / tokens_;
    v.collapsed = collapsed(v.kl, v.q_entropy, v.prior_entropy);
  }
  kl_ = hq_ = hp_ = tokens_ = 0;
  return v;
}

bool CollapseMonitor::collapsed(double kl, double q_entropy, double prior_entropy) {
  return kl < kMaxKl && std::abs(q_entropy - prior_entropy) <= kEntropyTolerance * prior_entropy;
}

std::string collapse_text(const CollapseVerdict& v, const char* unit) {
  return fmt::format("q has collapsed onto the prior: KL(q||p) {:.4f} nats/{} (< {}), H(q) {:.4f} within {:.0f}% of "
                     "H(p) {:.4f}; q carries no alignment",
                     v.kl, unit, CollapseMonitor::kMaxKl, v.q_entropy, 100 * CollapseMonitor::kEntropyTolerance,
                     v.prior_entropy);
}

std::string collapse_warning(const CollapseVerdict& v, int epoch) {
  return fmt::format("lava train: warning: epoch {}: {} (see README, the analysis of variational attention)", epoch,
                     collapse_text(v, "token"));
}

void report_collapse(JsonLine& json, double kl_sum, double q_entropy_sum, double prior_entropy_sum, double tokens,
                     int epoch) {
  CollapseMonitor m;
  m.add(kl_sum, q_entropy_sum, prior_entropy_sum, tokens);
  const CollapseVerdict v = m.end_epoch();
  if (v.tokens <= 0) return;
  json.add("q_collapsed", v.collapsed);
  if (v.collapsed) std::fprintf(stderr, "%s\n", collapse_warning(v, epoch).c_str());
}

}  // namespace lava
