#include "tasks/caption/model_file.hpp"

#include "core/check.hpp"
#include "tasks/model_file.hpp"
#include "tasks/model_file_checks.hpp"

namespace lava {

namespace {

// The sizes the constructor allocates by, each where the file's tensors hold it (CaptionModel's parameter names).
std::vector<SizeInTensor> sizes_in_tensors(const CaptionConfig& c) {
  return {
      {"words", c.words, "word_emb", 0},
      {"emb-size", c.emb, "word_emb", 1},
      {"feature_dim", c.feature_dim, "region/W", 0},
      {"annotation-size", c.annotation, "region/W", 1},
      {"hidden-size", c.hidden, "lstm/W_hh", 0},
      {"attn-size", c.attn_size, "attention/v", 0},
  };
}

}  // namespace

void save_caption_model(const std::string& path, const CaptionModel& model, const Vocab& vocab,
                        const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> meta = model.config().to_metadata();
  meta["words_vocab_tokens"] = vocab.to_text();
  save_model_file(path, model.ps, std::move(meta), extra);
}

LoadedCaptionModel load_caption_model(const std::string& path) {
  LoadedCaptionModel m;
  const ModelFile file(path);
  m.metadata = file.metadata();
  const CaptionConfig cfg = CaptionConfig::from_metadata(m.metadata, path);
  check_sizes_against_tensors(file.safetensors(), path, sizes_in_tensors(cfg));
  m.vocab = Vocab::from_text(m.metadata["words_vocab_tokens"], path);
  if (m.vocab.size() != cfg.words) throw input_error(path, 0, "the vocabulary does not match the word tables");
  m.model = std::make_unique<CaptionModel>(cfg);
  file.assign(m.model->ps);
  return m;
}

}  // namespace lava
