#pragma once
// Parameters to and from safetensors files (nn/safetensors.hpp): one tensor per parameter, under its name, plus
// string metadata (model configuration, vocabulary, training state). Writing is atomic (temp file + rename).
#include <map>
#include <string>

#include "nn/params.hpp"

namespace lava {

void save_params(const std::string& path, const ParamStore<float>& params,
                 const std::map<std::string, std::string>& metadata);

struct SafetensorsFile;

// Loads values into an already-declared store. Every parameter must be present with the same shape, and the file
// may hold no other tensors; a mismatch is one InputError naming the file and the parameter. Returns the metadata.
std::map<std::string, std::string> load_params(const std::string& path, ParamStore<float>& params);
// The same, from a file already read (`path` names it in errors).
void assign_params(const SafetensorsFile& file, const std::string& path, ParamStore<float>& params);

}  // namespace lava
