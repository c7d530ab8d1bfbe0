#include "tasks/model_file_checks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "nn/safetensors.hpp"

namespace lava {

void expect_model_format(const std::map<std::string, std::string>& meta, const std::string& file) {
  const auto it = meta.find("format");
  if (it == meta.end()) throw input_error(file, 0, "not a LAVA model file (no format tag)");
  if (it->second != kModelFormat)
    throw input_error(file, 0, fmt::format("model format {} is not supported (this LAVA reads {})",
                                           quote_input(it->second, '"'), kModelFormat));
}

void check_sizes_against_tensors(const SafetensorsFile& model, const std::string& file,
                                 const std::vector<SizeInTensor>& sizes) {
  for (const SizeInTensor& s : sizes) {
    const auto t = std::find_if(model.tensors.begin(), model.tensors.end(),
                                [&](const NamedTensor& n) { return n.name == s.tensor; });
    if (t == model.tensors.end())
      throw input_error(file, 0, fmt::format("model metadata \"{}\" = {} needs tensor \"{}\", which the file lacks",
                                             s.key, s.size, s.tensor));
    if (s.axis < 0) continue;
    if (size_t(s.axis) >= t->shape.size() || t->shape[size_t(s.axis)] != s.size) {
      std::string shape;
      for (int64_t d : t->shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      throw input_error(file, 0, fmt::format("model metadata \"{}\" = {} does not match tensor \"{}\" of shape [{}]",
                                             s.key, s.size, s.tensor, shape));
    }
  }
}

}  // namespace lava
