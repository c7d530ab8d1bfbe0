#pragma once
// Evaluation of a captioner (lava eval --task caption, and the validation of training), per word of the reference
// captions (</s> included):
//   nll             −log p(y | a) per word: for the latent variants the exact marginal Σ_t log Σ_i α_ti f(y_t | i),
//                   enumerated over the 9 regions; for soft attention log f(y_t | E α_t) directly
//   bound           −(training bound) per word: the Jensen bound Σ_t Σ_i α_ti log f(y_t | i) for hard attention,
//                   the ELBO for variational attention, = nll for the variants that train the likelihood
//   kl              KL(q ‖ α) per word (variants with q)
//   attn_acc        over the item words of the references (teacher-forced), the share whose argmax_i α_ti is the
//                   item's tagged region (chance 1/9)
//   bleu1..bleu4    corpus BLEU of the beam-decoded caption of each scene against all its references
//                   (eval/bleu_multi_ref.hpp), when decoding is asked for
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/caption/decode.hpp"

namespace lava {

struct CaptionEvalFigures {
  double captions = 0, words = 0;
  double nll = 0, bound = 0, kl = 0;
  double item_words = 0, attn_acc = 0;
  bool decoded = false;
  double scenes_decoded = 0, bleu[4] = {0, 0, 0, 0};
};

struct CaptionEvalOptions {
  int batch_size = 64;
  int limit = 0;   // only the first N scenes (0 = all)
  bool decode = true;
  CaptionDecodeOptions beam;
};

CaptionEvalFigures evaluate_caption(CaptionModel& model, const CaptionSplit& split, const Vocab& vocab,
                                    const CaptionEvalOptions& opt, std::vector<DecodedCaption>* decoded = nullptr);

}  // namespace lava
