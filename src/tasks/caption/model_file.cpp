#include "tasks/caption/model_file.hpp"

#include "core/check.hpp"
#include "nn/checkpoint.hpp"
#include "nn/safetensors.hpp"

namespace lava {

void save_caption_model(const std::string& path, const CaptionModel& model, const Vocab& vocab,
                        const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> meta = model.config().to_metadata();
  meta["words_vocab_tokens"] = vocab.to_text();
  meta["format"] = "lava-model-1";
  for (const auto& [k, v] : extra) meta[k] = v;
  save_params(path, model.ps, meta);
}

LoadedCaptionModel load_caption_model(const std::string& path) {
  LoadedCaptionModel m;
  const SafetensorsFile file = load_safetensors(path);
  m.metadata = file.metadata;
  if (m.metadata["format"] != "lava-model-1") throw input_error(path, 0, "not a LAVA model file (no format tag)");
  const CaptionConfig cfg = CaptionConfig::from_metadata(m.metadata, path);
  m.vocab = Vocab::from_text(m.metadata["words_vocab_tokens"], path);
  if (m.vocab.size() != cfg.words) throw input_error(path, 0, "the vocabulary does not match the word tables");
  m.model = std::make_unique<CaptionModel>(cfg);
  assign_params(file, path, m.model->ps);
  return m;
}

}  // namespace lava
