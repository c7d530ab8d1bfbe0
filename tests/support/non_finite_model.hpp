#pragma once
// A copy of a model file with one value of its first tensor made NaN or infinite (everything else, metadata
// included, unchanged), for the check that such a model is refused at load with the tensor's name.
#include <string>

#include "nn/safetensors.hpp"

// Returns the name of the tensor that was changed.
inline std::string write_non_finite_copy(const std::string& model, const std::string& out, float value) {
  lava::SafetensorsFile file = lava::load_safetensors(model);
  lava::NamedTensor& t = file.tensors.at(0);
  t.data.at(t.data.size() / 2) = value;
  lava::save_safetensors(out, file.tensors, file.metadata);
  return t.name;
}
