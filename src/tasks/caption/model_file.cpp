#include "tasks/caption/model_file.hpp"

#include "core/check.hpp"
#include "tasks/model_file.hpp"

namespace lava {

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
  m.vocab = Vocab::from_text(m.metadata["words_vocab_tokens"], path);
  if (m.vocab.size() != cfg.words) throw input_error(path, 0, "the vocabulary does not match the word tables");
  m.model = std::make_unique<CaptionModel>(cfg);
  file.assign(m.model->ps);
  return m;
}

}  // namespace lava
