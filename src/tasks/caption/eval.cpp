#include "tasks/caption/eval.hpp"

#include <algorithm>

#include "eval/bleu_multi_ref.hpp"

namespace lava {

CaptionEvalFigures evaluate_caption(CaptionModel& model, const CaptionSplit& split, const Vocab& vocab,
                                    const CaptionEvalOptions& opt, std::vector<DecodedCaption>* decoded) {
  const int scenes = opt.limit > 0 ? std::min(opt.limit, int(split.captions.size())) : int(split.captions.size());
  int examples = 0;
  while (examples < int(split.examples.size()) && split.examples[size_t(examples)].first < scenes) ++examples;
  CaptionEvalFigures f;
  AttentionEvalSums sums;
  int64_t hits = 0, items = 0;
  Tape<float> tape;
  for (int at = 0; at < examples; at += opt.batch_size) {
    std::vector<int> index;
    for (int e = at; e < std::min(examples, at + opt.batch_size); ++e) index.push_back(e);
    const CaptionBatch batch = make_caption_batch(split, vocab, index);
    tape.reset();
    Ctx c{tape, model.ps, false, CounterRng(0, 0), 0.f};
    sums.add(model.evaluate(c, batch));
    tape.reset();
    const std::vector<float> alpha = model.attention(c, batch);  // (B, T, S)
    for (size_t n = 0; n < batch.region.size(); ++n)
      if (batch.region[n] >= 0) {
        const float* a = alpha.data() + n * kSceneRegions;
        ++items;
        hits += std::max_element(a, a + kSceneRegions) - a == batch.region[n];
      }
  }
  f.captions = examples, f.words = sums.tokens;
  const double w = std::max(1.0, sums.tokens);
  f.nll = -sums.log_lik / w, f.bound = -sums.elbo / w, f.kl = sums.kl / w + 0.0;  // + 0.0: no −0 without q
  f.item_words = double(items), f.attn_acc = items ? double(hits) / double(items) : 0;
  if (!opt.decode) return f;

  BleuCounts counts;
  std::vector<float> features(size_t(kSceneRegions) * size_t(split.scenes->dim()));
  for (int s = 0; s < scenes; ++s) {
    split.scenes->get(s, features.data());
    DecodedCaption d = decode_caption(model, features.data(), opt.beam);
    std::vector<std::string> hyp;
    for (int32_t t : d.tokens) hyp.push_back(vocab.token(t));
    std::vector<std::vector<std::string>> refs;
    for (const Caption& c : split.captions[size_t(s)].refs) refs.push_back(c.words);
    counts += sentence_bleu_counts_multi(hyp, refs);
    if (decoded) decoded->push_back(std::move(d));
  }
  f.decoded = true, f.scenes_decoded = scenes;
  for (int n = 1; n <= 4; ++n) f.bleu[n - 1] = bleu_up_to(counts, n);
  return f;
}

}  // namespace lava
