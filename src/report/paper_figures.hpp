#pragma once
// The paper's published numbers (Deng et al. 2018, Tables 1, 2 and 3), as src/method.md §6 gives them: reference
// data that `lava report --tables paper` prints beside LAVA's figures. One row per `--attn` variant the paper has, in
// the paper's row order, which is also the order of the report's rows.
#include <string>
#include <vector>

namespace lava {

struct PaperFigures {
  const char* attn;       // the --attn variant that implements the row
  const char* model;      // the paper's row name
  const char* objective;  // the objective it trains
  const char* estimator;  // E: how the expectation is computed (Enum, Sample, Relaxed, ...)
  // Translation (IWSLT14 de-en): Table 1 PPL and BLEU, Table 3's prior entropy, Table 2's K-max (K = 5) PPL and
  // BLEU. NaN where the paper has no figure.
  double nmt_ppl, nmt_bleu, nmt_entropy, nmt_ppl_kmax, nmt_bleu_kmax;
  // VQA 2.0: Table 1 NLL and VQA score, Table 3's prior entropy.
  double vqa_nll, vqa_eval, vqa_entropy;
};

// Every row, in the paper's order.
const std::vector<PaperFigures>& paper_figures();
// The row of `attn`, or nullptr when the paper has none.
const PaperFigures* paper_figures_of(const std::string& attn);

}  // namespace lava
