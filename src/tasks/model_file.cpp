#include "tasks/model_file.hpp"

#include "core/check.hpp"
#include "nn/checkpoint.hpp"
#include "tasks/model_file_checks.hpp"

namespace lava {

void save_model_file(const std::string& path, const ParamStore<float>& params,
                     std::map<std::string, std::string> metadata, const std::map<std::string, std::string>& extra) {
  metadata["format"] = kModelFormat;
  for (const auto& [k, v] : extra) metadata[k] = v;
  save_params(path, params, metadata);
}

ModelFile::ModelFile(std::string path) : path_(std::move(path)), file_(load_safetensors(path_)) {
  expect_model_format(file_.metadata, path_);
}

void ModelFile::assign(ParamStore<float>& params) const { assign_params(file_, path_, params); }

}  // namespace lava
