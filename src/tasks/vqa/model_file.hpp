#pragma once
// A VQA model on disk: the safetensors checkpoint with the architecture (VqaConfig), the question-word vocabulary
// and the answer list in its metadata, tagged "format": "lava-model-1" and "task": "vqa". Loading checks the tag,
// rebuilds the model from the metadata and then every parameter by name and shape, so a foreign, truncated or
// mismatched file is one InputError naming the file.
#include <map>
#include <memory>
#include <string>

#include "data/vocab.hpp"
#include "tasks/vqa/model.hpp"

namespace lava {

struct LoadedVqa {
  std::unique_ptr<VqaModel> model;
  Vocab words;
  AnswerVocab answers;
  std::map<std::string, std::string> metadata;
};
LoadedVqa load_vqa(const std::string& path);
// Written atomically; `extra` entries are added to the metadata (epoch, validation figures, ...).
void save_vqa(const std::string& path, const VqaModel& model, const Vocab& words, const AnswerVocab& answers,
              const std::map<std::string, std::string>& extra);

// InputError naming the split's features file unless its regions and feature size are the model's.
void check_vqa_features(const VqaConfig& cfg, const VqaSplit& split);

}  // namespace lava
