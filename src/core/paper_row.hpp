#pragma once
// The row of the paper (Deng et al. 2018, Tables 1, 2 and 3; src/method.md §6) that an attention variant reproduces:
// reference data, no code. Each variant declares its own (AttnVariantInfo::paper, attention/variant.hpp); the paper
// tables (report/paper_figures.hpp) print it beside LAVA's figures. It sits in core because both sides read it, and
// the report layer may not read the attention layer.
#include <limits>

namespace lava {

struct PaperRow {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();  // a figure the paper does not give

  // The row's place in the tables: the paper's Table 1 order, then Table 3's rows Table 1 does not have. 0: the
  // paper has no row for the variant.
  int rank = 0;
  const char* model = "";      // the paper's row name
  const char* objective = "";  // the objective it trains
  const char* estimator = "";  // E: how the expectation is computed (Enum, Sample, Relaxed, ...)
  // Translation (IWSLT14 de-en): Table 1 PPL and BLEU, Table 3's prior entropy, Table 2's K-max (K = 5) PPL and BLEU.
  double nmt_ppl = kNone, nmt_bleu = kNone, nmt_entropy = kNone, nmt_ppl_kmax = kNone, nmt_bleu_kmax = kNone;
  // VQA 2.0: Table 1 NLL and VQA score, Table 3's prior entropy.
  double vqa_nll = kNone, vqa_eval = kNone, vqa_entropy = kNone;
  // The row's place among Table 3's inference alternatives for variational attention; 0: not one of them.
  int inference_rank = 0;
  // What Table 3's text says of the row's settings, after its --attn word; "{KEY}" stands for the value of the
  // runs' option KEY ("draws K = {samples} samples from q"). nullptr: nothing.
  const char* inference_note = nullptr;
};

}  // namespace lava
