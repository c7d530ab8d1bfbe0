#pragma once
// Every task's model file: the parameters as safetensors tensors and, in the string metadata, the configuration,
// the vocabularies, the format tag "lava-model-1" and what training adds (epoch, validation figures). Each task's
// own model_file names its metadata and rebuilds its model; writing and reading the file is done here, once.
#include <map>
#include <string>

#include "nn/params.hpp"
#include "nn/safetensors.hpp"

namespace lava {

// Writes atomically: `metadata` (the configuration and vocabularies) plus the format tag, then `extra` over both.
void save_model_file(const std::string& path, const ParamStore<float>& params,
                     std::map<std::string, std::string> metadata, const std::map<std::string, std::string>& extra);

// A model file read and its format tag checked (tasks/model_file_checks.hpp; an InputError naming the file otherwise).
class ModelFile {
 public:
  explicit ModelFile(std::string path);
  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return file_.metadata; }
  // The tensors' names and shapes, which check_sizes_against_tensors holds the metadata's sizes to.
  const SafetensorsFile& safetensors() const { return file_; }
  // Fills a store declared from the metadata's configuration: every parameter by name and shape, nothing else.
  void assign(ParamStore<float>& params) const;

 private:
  std::string path_;
  SafetensorsFile file_;
};

}  // namespace lava
