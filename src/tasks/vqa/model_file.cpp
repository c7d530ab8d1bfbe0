#include "tasks/vqa/model_file.hpp"

#include "core/check.hpp"
#include "tasks/model_file.hpp"
#include "tasks/model_file_checks.hpp"

namespace lava {

namespace {

// The sizes the constructor allocates by, each where the file's tensors hold it (VqaModel's parameter names).
std::vector<SizeInTensor> sizes_in_tensors(const VqaConfig& c) {
  std::vector<SizeInTensor> s = {
      {"words", c.words, "word_emb", 0},
      {"emb-size", c.emb, "word_emb", 1},
      {"hidden-size", c.hidden, "question/W_hh", 0},
      {"feature_dim", c.feature_dim, "region/W", 0},
      {"mlp-size", c.mlp, "answer_mlp/out/W", 0},
      {"answers", c.answers, "answer_mlp/out/W", 1},
  };
  if (variant_info(c.attn).attends) s.push_back({"attn-size", c.attn_size, "prior/W1", 1});
  if (variant_info(c.attn).uses_q) s.push_back({"answer-emb", c.answer_emb, "inference/answer_emb", 1});
  return s;
}

}  // namespace

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
  check_sizes_against_tensors(file.safetensors(), path, sizes_in_tensors(cfg));
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
