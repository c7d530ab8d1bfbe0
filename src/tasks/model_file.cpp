#include "tasks/model_file.hpp"

#include "core/check.hpp"
#include "nn/checkpoint.hpp"

namespace lava {

namespace {
constexpr const char* kFormatTag = "lava-model-1";
}

void save_model_file(const std::string& path, const ParamStore<float>& params,
                     std::map<std::string, std::string> metadata, const std::map<std::string, std::string>& extra) {
  metadata["format"] = kFormatTag;
  for (const auto& [k, v] : extra) metadata[k] = v;
  save_params(path, params, metadata);
}

ModelFile::ModelFile(std::string path) : path_(std::move(path)), file_(load_safetensors(path_)) {
  const auto format = file_.metadata.find("format");
  if (format == file_.metadata.end() || format->second != kFormatTag)
    throw input_error(path_, 0, "not a LAVA model file (no format tag)");
}

void ModelFile::assign(ParamStore<float>& params) const { assign_params(file_, path_, params); }

}  // namespace lava
