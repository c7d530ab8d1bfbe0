#include "tasks/caption/data.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "data/batcher.hpp"

namespace lava {

CaptionSplit load_caption_split(const std::string& dir, const std::string& split, const std::string& mnist_dir) {
  CaptionSplit s;
  s.name = split;
  s.scenes = std::make_shared<const SceneSet>(SceneSet::load(dir, split, mnist_dir));
  s.captions_path = dir + "/" + split + ".captions.tsv";
  s.captions = read_scene_captions(s.captions_path, s.scenes->num_images());
  if (s.captions.empty()) throw input_error(s.captions_path, 0, "no scenes");
  for (const SceneCaptions& sc : s.captions)
    for (size_t k = 0; k < sc.refs.size(); ++k) s.examples.emplace_back(sc.scene, int(k));
  return s;
}

Vocab build_caption_vocab(const CaptionSplit& train) {
  TokenCounter counts;
  for (const SceneCaptions& sc : train.captions)
    for (const Caption& c : sc.refs)
      for (const std::string& w : c.words) counts.add(w);
  return Vocab::build(counts, VocabOptions{});
}

CaptionBatch make_caption_batch(const CaptionSplit& split, const Vocab& vocab, const std::vector<int>& examples) {
  CaptionBatch b;
  b.B = int(examples.size());
  b.D = split.scenes->dim();
  for (int e : examples) {
    const auto [scene, ref] = split.examples[size_t(e)];
    b.T = std::max(b.T, int(split.captions[size_t(scene)].refs[size_t(ref)].words.size()) + 1);
  }
  const size_t BT = size_t(b.B) * size_t(b.T);
  b.features.resize(size_t(b.B) * size_t(b.R) * size_t(b.D));
  b.tgt_in.assign(BT, Vocab::kPad), b.tgt_out.assign(BT, Vocab::kPad);
  b.mask.assign(BT, 0.f), b.region.assign(BT, -1);
  for (int i = 0; i < b.B; ++i) {
    const auto [scene, ref] = split.examples[size_t(examples[size_t(i)])];
    split.scenes->get(scene, b.features.data() + size_t(i) * size_t(b.R) * size_t(b.D));
    const Caption& c = split.captions[size_t(scene)].refs[size_t(ref)];
    const int n = int(c.words.size());
    const size_t row = size_t(i) * size_t(b.T);
    for (int t = 0; t <= n; ++t) {
      b.tgt_in[row + size_t(t)] = t == 0 ? Vocab::kBos : vocab.id(c.words[size_t(t - 1)]);
      b.tgt_out[row + size_t(t)] = t == n ? Vocab::kEos : vocab.id(c.words[size_t(t)]);
      b.mask[row + size_t(t)] = 1.f;
      if (t < n) b.region[row + size_t(t)] = c.region[size_t(t)];
    }
    b.lengths.push_back(n + 1);
  }
  return b;
}

std::vector<std::vector<int>> caption_train_batches(int count, int batch_size, uint64_t seed, int64_t epoch) {
  return shuffled_batches(count, batch_size, seed, "caption/shuffle", epoch);
}

}  // namespace lava
