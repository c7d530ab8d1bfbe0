#include "tasks/caption/decode.hpp"

#include <algorithm>
#include <cmath>

namespace lava {

DecodedCaption decode_caption(CaptionModel& model, const float* features, const CaptionDecodeOptions& opt) {
  const int K = opt.beam, S = kSceneRegions, V = model.config().words, D = model.config().feature_dim;
  Tape<float> tape;
  Ctx c{tape, model.ps, false, CounterRng(0, 0), 0.f};
  NoGrad<float> no_grad(tape);
  std::vector<float> feats(size_t(K) * S * D);
  for (int k = 0; k < K; ++k) std::copy_n(features, size_t(S) * D, feats.begin() + ptrdiff_t(k) * S * D);
  const CaptionModel::Encoded enc = model.encode(c, feats.data(), K);
  CaptionState state = model.initial_state(c, enc);
  struct Hyp {
    std::vector<int32_t> tokens;
    std::vector<int8_t> region;
    std::vector<std::array<float, kSceneRegions>> attention;
    double score = 0;
  };
  std::vector<Hyp> beam(1);  // one live hypothesis at first: the other rows compute and are ignored
  std::vector<int32_t> prev(size_t(K), Vocab::kBos);
  std::vector<DecodedCaption> finished;
  for (int len = 0; len <= opt.max_len && !beam.empty(); ++len) {
    Var<float> emb = model.embed(c, prev.data(), Shape{K});
    const CaptionModel::Step step = model.step(c, enc, state, emb);
    const std::vector<float> lp = model.next_word_log_probs(c, enc, step, emb);
    struct Cand {
      double score;
      int hyp, word;
    };
    std::vector<Cand> cands;
    for (int h = 0; h < int(beam.size()); ++h)
      for (int v = Vocab::kEos; v < V; ++v) {  // </s> is the last control symbol: <pad>, <unk>, <bos> never come
        if (len == opt.max_len && v != Vocab::kEos) continue;
        cands.push_back({beam[size_t(h)].score + lp[size_t(h) * V + v], h, v});
      }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.score > b.score; });
    // The K − |finished| best candidates; those ending in </s> leave the beam.
    const size_t keep = size_t(K) - finished.size();
    std::vector<Hyp> next;
    std::vector<int> parent;
    for (size_t i = 0, taken = 0; i < cands.size() && taken < keep; ++i, ++taken) {
      const Cand& cd = cands[i];
      const Hyp& h = beam[size_t(cd.hyp)];
      if (cd.word == Vocab::kEos) {
        finished.push_back({h.tokens, h.region, h.attention, cd.score / std::pow(double(h.tokens.size() + 1), opt.alpha)});
        continue;
      }
      const float* la = step.log_alpha.val() + size_t(cd.hyp) * S;
      Hyp g = h;
      g.tokens.push_back(cd.word), g.region.push_back(int8_t(std::max_element(la, la + S) - la)), g.score = cd.score;
      g.attention.emplace_back();
      for (int i = 0; i < S; ++i) g.attention.back()[size_t(i)] = std::exp(la[i]);
      next.push_back(std::move(g));
      parent.push_back(cd.hyp);
    }
    if (cands.empty() || cands[0].word == Vocab::kEos || next.empty()) break;
    // Reorder the state rows to the kept hypotheses' parents (a row gather); unused rows repeat row 0.
    std::vector<int32_t> rows(size_t(K), 0);
    for (size_t k = 0; k < parent.size(); ++k) rows[k] = parent[k];
    state = {embedding(step.state.h, rows.data(), Shape{K}), embedding(step.state.cell, rows.data(), Shape{K})};
    std::fill(prev.begin(), prev.end(), Vocab::kEos);
    for (size_t k = 0; k < next.size(); ++k) prev[k] = next[k].tokens.back();
    beam = std::move(next);
  }
  if (finished.empty())
    for (const Hyp& h : beam)
      finished.push_back({h.tokens, h.region, h.attention, h.score / std::pow(double(h.tokens.size() + 1), opt.alpha)});
  return *std::max_element(finished.begin(), finished.end(), [](const DecodedCaption& a, const DecodedCaption& b) {
    return a.log_prob < b.log_prob;  // ties: the first finished
  });
}

}  // namespace lava
