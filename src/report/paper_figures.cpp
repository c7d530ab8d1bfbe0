#include "report/paper_figures.hpp"

#include <limits>

namespace lava {

namespace {
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
}  // namespace

// src/method.md §6: Table 1 (NMT PPL, BLEU; VQA NLL, VQA Eval), Table 2 (exact / K-max, K = 5) and Table 3
// (inference alternatives' PPL and BLEU; prior entropy, translation / VQA).
const std::vector<PaperFigures>& paper_figures() {
  static const std::vector<PaperFigures> rows = {
      //  attn            model                                    objective                E
      //  nmt: ppl  bleu   entropy ppl_kmax bleu_kmax     vqa: nll eval entropy
      {"soft", "Soft Attention", "log p(y | E[z])", "–",  //
       7.17, 32.77, 1.24, kNone, kNone, 1.76, 58.93, 2.70},
      {"marginal", "Marginal Likelihood", "log E[p]", "Enum",  //
       6.34, 33.29, 0.82, 6.90, 33.31, 1.69, 60.33, 2.66},
      {"hard-enum", "Hard Attention", "E_p[log p]", "Enum",  //
       7.37, 31.40, 0.05, 7.37, 31.37, 1.78, 57.60, 0.73},
      {"hard-sample", "Hard Attention", "E_p[log p]", "Sample",  //
       7.38, 31.00, 0.07, 7.38, 31.04, 1.82, 56.30, 0.58},
      {"var-dirichlet", "Variational Relaxed Attention", "E_q[log p] − KL", "Sample",  //
       7.58, 30.05, 2.02, kNone, kNone, kNone, kNone, kNone},
      {"var-enum", "Variational Attention", "E_q[log p] − KL", "Enum",  //
       6.08, 33.68, 0.54, 6.42, 33.69, 1.69, 58.44, 2.07},
      {"var-sample", "Variational Attention", "E_q[log p] − KL", "Sample",  //
       6.17, 33.30, 0.52, 6.51, 33.27, 1.75, 57.52, 2.44},
      {"var-gumbel", "Variational Attention (Gumbel-softmax)", "E_q[log p] − KL", "Relaxed",  //
       6.51, 33.08, kNone, kNone, kNone, kNone, kNone, kNone},
      {"var-rws", "Variational Attention (RWS)", "wake-sleep", "Sample (K)",  //
       6.41, 32.96, kNone, kNone, kNone, kNone, kNone, kNone},
  };
  return rows;
}

const PaperFigures* paper_figures_of(const std::string& attn) {
  for (const PaperFigures& p : paper_figures())
    if (attn == p.attn) return &p;
  return nullptr;
}

}  // namespace lava
