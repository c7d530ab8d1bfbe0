#include "tasks/nmt/plots.hpp"

#include "core/check.hpp"
#include "report/svg.hpp"

namespace lava {

AttentionExamples attention_examples(const ParallelSplit& split, int count) {
  LAVA_CHECK(split.src_tokens.size() == split.pairs.size() && split.tgt_tokens.size() == split.pairs.size(),
             "attention examples need the split's token strings");
  AttentionExamples ex;
  for (size_t k = 0; k < split.pairs.size() && int(k) < count; ++k) {
    ex.pairs.push_back(split.pairs[k]);
    ex.src_words.push_back(split.src_tokens[k]);
    ex.tgt_words.push_back(split.tgt_tokens[k]);
    ex.tgt_words.back().emplace_back(Vocab::kSpecialTokens[Vocab::kEos]);  // the last prediction is <eos>
  }
  return ex;
}

void write_attention_plots(const std::string& dir, Seq2Seq& model, const AttentionExamples& examples,
                           std::string_view caption) {
  if (examples.pairs.empty()) return;
  std::vector<int> index(examples.pairs.size());
  for (size_t k = 0; k < index.size(); ++k) index[k] = int(k);
  const Batch batch = make_batch(examples.pairs, index);
  Tape<float> tape;
  Ctx c{tape, model.ps, false, CounterRng(0, stream_id("plot")), 0.f};
  const AttentionMaps maps = model.attention_maps(c, batch);  // (B, T, S) each
  HeatmapOptions hopt;
  hopt.row_axis = "target", hopt.col_axis = "source";
  for (int b = 0; b < batch.B; ++b) {
    // Sentence b occupies rows 0..tgt_len−1 and columns 0..src_len−1 of its (T, S) slice.
    const int rows = batch.tgt_len[size_t(b)], cols = batch.src_len[size_t(b)];
    const std::vector<std::string>& row_words = examples.tgt_words[size_t(b)];
    const std::vector<std::string>& col_words = examples.src_words[size_t(b)];
    LAVA_CHECK(int(row_words.size()) == rows && int(col_words.size()) == cols,
               "example {}: {}x{} words for a {}x{} attention matrix", b, row_words.size(), col_words.size(), rows,
               cols);
    auto slice = [&](const std::vector<float>& m) {
      std::vector<double> out(size_t(rows) * size_t(cols));
      for (int t = 0; t < rows; ++t)
        for (int s = 0; s < cols; ++s)
          out[size_t(t) * size_t(cols) + size_t(s)] =
              m[(size_t(b) * size_t(maps.T) + size_t(t)) * size_t(maps.S) + size_t(s)];
      return out;
    };
    const std::string name = fmt::format("{}/attention-{}", dir, b + 1);
    const std::string title = fmt::format("{}: valid sentence {} (line {}), {}", variant_info(model.config().attn).name,
                                          b + 1, examples.pairs[size_t(b)].line, caption);
    const std::vector<double> posterior = slice(maps.posterior);
    write_heatmap_pair(name + ".svg", title, row_words, col_words, slice(maps.prior), "prior p(z | x, y<j)", posterior,
                       "posterior p(z | x, y)", hopt);
    if (!maps.q.empty())
      write_heatmap_pair(name + "-q.svg", title, row_words, col_words, slice(maps.q), "q(z | x, y)", posterior,
                         "posterior p(z | x, y)", hopt);
  }
}

}  // namespace lava
