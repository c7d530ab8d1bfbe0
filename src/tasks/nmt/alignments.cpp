#include "tasks/nmt/alignments.hpp"

#include <algorithm>
#include <span>

#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

const char* align_which_name(AlignWhich which) {
  switch (which) {
    case AlignWhich::prior: return "prior";
    case AlignWhich::posterior: return "posterior";
    case AlignWhich::q: return "q";
  }
  return "?";
}

AlignWhich parse_align_which(const std::string& name) {
  if (name == "prior") return AlignWhich::prior;
  if (name == "posterior") return AlignWhich::posterior;
  if (name == "q") return AlignWhich::q;
  throw UsageError(fmt::format("--which {}: expected prior, posterior or q", quote_input(name)));
}

namespace {

// The links of one sentence: target word t -> argmax_{i < src_len} d[t, i], ties to the lowest i (a NaN never wins
// a comparison, so a diverged model still gives in-range links).
//   d: (T, S) the sentence's row of a (B, T, S) map; rows t >= tgt_words (</s>, padding) are not read.
SentenceAlignment argmax_links(const float* d, int S, int src_len, int tgt_words) {
  SentenceAlignment links;
  links.reserve(size_t(tgt_words));
  for (int t = 0; t < tgt_words; ++t) {
    const float* row = d + size_t(t) * size_t(S);
    int best = 0;
    for (int i = 1; i < src_len; ++i)
      if (row[i] > row[best]) best = i;
    links.push_back({best, t, true});
  }
  normalize_alignment(links);  // sorted by (src, tgt), as write_alignments and score_alignments expect
  return links;
}

const std::vector<float>& map_of(const AttentionMaps& maps, AlignWhich which) {
  switch (which) {
    case AlignWhich::prior: return maps.prior;
    case AlignWhich::posterior: return maps.posterior;
    case AlignWhich::q: return maps.q;
  }
  return maps.prior;
}

// Alignments of every pair from each of `whichs`: out[w][k] is pair k's alignment under whichs[w]. The batches come
// sorted by length (eval_batches); Batch::index puts each row back at its pair's place.
std::vector<std::vector<SentenceAlignment>> predict_all(Seq2Seq& model, const ParallelSplit& split,
                                                        std::span<const AlignWhich> whichs, int batch_size) {
  const bool has_q = variant_info(model.config().attn).uses_q;
  for (AlignWhich w : whichs)
    if (w == AlignWhich::q && !has_q)
      throw UsageError(fmt::format(
          "--which q: this model (--attn {}) has no inference network q(z|x,y); only the variants with q have one "
          "(use prior or posterior)",
          variant_info(model.config().attn).name));
  std::vector<std::vector<SentenceAlignment>> out(whichs.size(), std::vector<SentenceAlignment>(split.pairs.size()));
  std::vector<uint8_t> done(split.pairs.size(), 0);
  Tape<float> tape;
  for (const std::vector<int>& idx : eval_batches(split.pairs, batch_size)) {
    tape.reset();
    Ctx c{tape, model.ps, false, CounterRng(0, stream_id("align")), 0.f};  // no dropout, no sampling
    const Batch batch = make_batch(split.pairs, idx);
    const AttentionMaps maps = model.attention_maps(c, batch);
    LAVA_CHECK(maps.B == batch.B && maps.T == batch.T && maps.S == batch.S, "attention maps of shape ({}, {}, {})",
               maps.B, maps.T, maps.S);
    const size_t row_size = size_t(maps.T) * size_t(maps.S);
    for (size_t w = 0; w < whichs.size(); ++w) {
      const std::vector<float>& d = map_of(maps, whichs[w]);  // (B, T, S)
      LAVA_CHECK(d.size() == size_t(maps.B) * row_size, "{} map has {} values for ({}, {}, {})",
                 align_which_name(whichs[w]), d.size(), maps.B, maps.T, maps.S);
      for (int b = 0; b < batch.B; ++b) {
        const int k = batch.index[size_t(b)];
        // tgt_len counts y_1..y_n and </s>: n = tgt_len − 1 words, word t predicted at decoder position t.
        out[w][size_t(k)] = argmax_links(d.data() + size_t(b) * row_size, maps.S, batch.src_len[size_t(b)],
                                         batch.tgt_len[size_t(b)] - 1);
      }
    }
    for (int k : idx) done[size_t(k)] = 1;
  }
  for (size_t k = 0; k < done.size(); ++k) LAVA_CHECK(done[k], "pair {} is in no evaluation batch", k);
  return out;
}

}  // namespace

std::vector<SentenceAlignment> predict_alignments(Seq2Seq& model, const ParallelSplit& split, AlignWhich which,
                                                  int batch_size) {
  const AlignWhich whichs[] = {which};
  return std::move(predict_all(model, split, whichs, batch_size)[0]);
}

std::vector<SentenceAlignment> alignments_by_line(const ParallelSplit& split,
                                                  const std::vector<SentenceAlignment>& per_pair) {
  LAVA_CHECK(per_pair.size() == split.pairs.size(), "{} alignments for {} pairs", per_pair.size(), split.pairs.size());
  std::vector<SentenceAlignment> lines(size_t(split.stats.lines));
  for (size_t k = 0; k < per_pair.size(); ++k) {
    const int line = split.pairs[k].line;
    LAVA_CHECK(line >= 1 && line <= split.stats.lines, "pair {} at line {} of {}", k, line, split.stats.lines);
    lines[size_t(line - 1)] = per_pair[k];
  }
  return lines;
}

std::vector<SentenceAlignment> read_gold_alignments(const ParallelSplit& split, const std::string& gold_path) {
  if (split.stats.long_skipped > 0)
    throw UsageError(fmt::format(
        "alignment gold {}: {} pairs of {} were skipped as too long, so their gold lines cannot be checked; read "
        "the split without a length limit",
        gold_path, split.stats.long_skipped, split.src_path));
  // A skipped line had an empty side: {0, 0} makes any link on it an error.
  std::vector<SentenceLengths> lengths(size_t(split.stats.lines));
  for (const SentencePair& p : split.pairs) lengths[size_t(p.line - 1)] = {int(p.src.size()), int(p.tgt.size())};
  return read_alignments(gold_path, lengths);
}

AlignmentEvaluation evaluate_alignments(Seq2Seq& model, const ParallelSplit& split,
                                        const std::vector<SentenceAlignment>& gold_by_line, int batch_size) {
  std::vector<AlignWhich> whichs = {AlignWhich::prior, AlignWhich::posterior};
  if (variant_info(model.config().attn).uses_q) whichs.push_back(AlignWhich::q);
  const auto hyp = predict_all(model, split, whichs, batch_size);
  // The lines up to the last pair's. A line after it that the reader skipped has an empty side, so no link in
  // either list: on a whole split this is every line's score, and on its first pairs (--limit) theirs alone.
  size_t last_line = 0;
  for (const SentencePair& p : split.pairs) last_line = std::max(last_line, size_t(p.line));
  LAVA_CHECK(last_line <= gold_by_line.size(), "gold of {} lines for a pair at line {}", gold_by_line.size(),
             last_line);
  const std::vector<SentenceAlignment> covered_gold(gold_by_line.begin(), gold_by_line.begin() + ptrdiff_t(last_line));
  auto score = [&](const std::vector<SentenceAlignment>& per_pair) {
    std::vector<SentenceAlignment> lines = alignments_by_line(split, per_pair);
    lines.resize(covered_gold.size());
    return score_alignments(lines, covered_gold);
  };
  AlignmentEvaluation e;
  e.prior = score(hyp[0]);
  e.posterior = score(hyp[1]);
  if (whichs.size() == 3) e.q = score(hyp[2]);
  return e;
}

AlignmentEvaluation evaluate_alignments(Seq2Seq& model, const ParallelSplit& split, const std::string& gold_path,
                                        int batch_size) {
  return evaluate_alignments(model, split, read_gold_alignments(split, gold_path), batch_size);
}

}  // namespace lava
