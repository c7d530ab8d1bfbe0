#include "models/model_metadata.hpp"

#include <fmt/format.h>

#include "core/check.hpp"

namespace lava {

const std::string& ModelMetadata::get(const char* key) const {
  auto it = meta_.find(key);
  if (it == meta_.end()) throw input_error(file_, 0, fmt::format("model metadata lacks \"{}\"", key));
  return it->second;
}

int ModelMetadata::get_int(const char* key, int lo, int hi) const {
  const std::string& text = get(key);
  int v = 0;
  try {
    size_t used = 0;
    v = std::stoi(text, &used);
    if (used != text.size()) throw std::invalid_argument(key);
  } catch (const std::logic_error&) {
    throw input_error(file_, 0, fmt::format("model metadata \"{}\" is not a number", key));
  }
  if (v < lo || v > hi)
    throw input_error(file_, 0, fmt::format("model metadata \"{}\" = {} is out of range [{}, {}]", key, v, lo, hi));
  return v;
}

float ModelMetadata::get_float(const char* key) const {
  try {
    return std::stof(get(key));
  } catch (const std::logic_error&) {
    throw input_error(file_, 0, fmt::format("model metadata \"{}\" is not a number", key));
  }
}

const std::string& ModelMetadata::get_choice(const char* key, std::initializer_list<const char*> allowed) const {
  const std::string& v = get(key);
  for (const char* a : allowed)
    if (v == a) return v;
  throw input_error(file_, 0, fmt::format("model metadata \"{}\" has the unknown value \"{}\"", key, v));
}

AttnVariant ModelMetadata::get_attn() const {
  try {
    return parse_attn_variant(get("attn"));
  } catch (const UsageError&) {
    throw input_error(file_, 0, "unknown attention variant " + get("attn"));
  }
}

void ModelMetadata::expect_task(const char* task, const char* what) const {
  if (get("task") != task) throw input_error(file_, 0, fmt::format("not a {} model (task {})", what, get("task")));
}

}  // namespace lava
