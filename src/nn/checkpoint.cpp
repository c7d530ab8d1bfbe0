#include "nn/checkpoint.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "nn/safetensors.hpp"

namespace lava {

void save_params(const std::string& path, const ParamStore<float>& params,
                 const std::map<std::string, std::string>& metadata) {
  std::vector<NamedTensor> tensors;
  for (const auto& p : params.params()) {
    NamedTensor t;
    t.name = p.name;
    for (int i = 0; i < p.shape.rank; ++i) t.shape.push_back(p.shape[i]);
    const float* v = params.values() + p.offset;
    t.data.assign(v, v + p.shape.numel());
    tensors.push_back(std::move(t));
  }
  save_safetensors(path, tensors, metadata);
}

std::map<std::string, std::string> load_params(const std::string& path, ParamStore<float>& params) {
  SafetensorsFile file = load_safetensors(path);
  assign_params(file, path, params);
  return file.metadata;
}

void assign_params(const SafetensorsFile& file, const std::string& path, ParamStore<float>& params) {
  for (const NamedTensor& t : file.tensors) {
    const int id = params.find(t.name);
    if (id < 0) throw input_error(path, 0, "tensor " + quote_input(t.name, '"') + " is not a parameter of this model");
    const Shape& want = params.params()[size_t(id)].shape;
    bool same = int(t.shape.size()) == want.rank;
    for (int i = 0; same && i < want.rank; ++i) same = t.shape[size_t(i)] == want[i];
    if (!same) {
      std::string got = "(";
      for (size_t i = 0; i < t.shape.size(); ++i) got += (i ? ", " : "") + std::to_string(t.shape[i]);
      throw input_error(path, 0, fmt::format("parameter {} has shape {}), the model expects {}", quote_input(t.name, '"'), got,
                                             want.str()));
    }
    // A NaN or infinity evaluates to figures that look like results (entropy 0, accuracy 0), so it stops here.
    const auto bad = std::find_if(t.data.begin(), t.data.end(), [](float v) { return !std::isfinite(v); });
    if (bad != t.data.end())
      throw input_error(path, 0, fmt::format("parameter {} holds a non-finite value ({} at flat index {}); the model "
                                             "is unusable (did training diverge?)",
                                             quote_input(t.name, '"'), *bad, bad - t.data.begin()));
    std::copy(t.data.begin(), t.data.end(), params.val(id));
  }
  for (const auto& p : params.params()) {
    const bool present = std::any_of(file.tensors.begin(), file.tensors.end(),
                                     [&](const NamedTensor& t) { return t.name == p.name; });
    if (!present) throw input_error(path, 0, "parameter \"" + p.name + "\" is missing");
  }
}

}  // namespace lava
