#include "tasks/vqa/model_file.hpp"

#include "core/check.hpp"
#include "tasks/model_file.hpp"

namespace lava {

void save_vqa(const std::string& path, const VqaModel& model, const Vocab& words, const AnswerVocab& answers,
              const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> meta = model.config().to_metadata();
  meta["words_vocab_tokens"] = words.to_text();
  meta["answer_list"] = answers.to_text();
  save_model_file(path, model.ps, std::move(meta), extra);
}

LoadedVqa load_vqa(const std::string& path) {
  LoadedVqa m;
  const ModelFile file(path);
  m.metadata = file.metadata();
  const VqaConfig cfg = VqaConfig::from_metadata(m.metadata, path);
  m.words = Vocab::from_text(m.metadata["words_vocab_tokens"], path);
  m.answers = AnswerVocab::from_text(m.metadata["answer_list"], path);
  if (m.words.size() != cfg.words || m.answers.size() != cfg.answers)
    throw input_error(path, 0, "vocabulary sizes do not match the model's embedding and output tables");
  m.model = std::make_unique<VqaModel>(cfg);
  file.assign(m.model->ps);
  return m;
}

void check_vqa_features(const VqaConfig& cfg, const VqaSplit& split) {
  const RegionFeatures& f = *split.features;
  if (f.num_regions() != cfg.regions || f.dim() != cfg.feature_dim)
    throw input_error(split.features_path, 0,
                      fmt::format("{} regions of {} features per image; the model was trained on {} of {}",
                                  f.num_regions(), f.dim(), cfg.regions, cfg.feature_dim));
}

}  // namespace lava
