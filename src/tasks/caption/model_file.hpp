#pragma once
// The captioner's model file: its parameters and, in the safetensors metadata, its configuration and the caption
// vocabulary (format "lava-model-1", task "caption").
#include <map>
#include <memory>
#include <string>

#include "tasks/caption/model.hpp"

namespace lava {

void save_caption_model(const std::string& path, const CaptionModel& model, const Vocab& vocab,
                        const std::map<std::string, std::string>& extra);

struct LoadedCaptionModel {
  std::unique_ptr<CaptionModel> model;
  Vocab vocab;
  std::map<std::string, std::string> metadata;
};
LoadedCaptionModel load_caption_model(const std::string& path);

}  // namespace lava
