#pragma once
// The safetensors file format (https://github.com/huggingface/safetensors), F32 only:
//   [u64 little-endian N] [N bytes of JSON header, space-padded so N % 8 == 0] [raw little-endian data]
//   header = {"__metadata__": {str: str}, "<name>": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}
// Offsets are relative to the start of the data; the tensors tile the data exactly (no holes, no overlap).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lava {

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;  // row-major; {} is a scalar
  std::vector<float> data;     // product(shape) values
};

struct SafetensorsFile {
  std::vector<NamedTensor> tensors;  // in header order
  std::map<std::string, std::string> metadata;
};

// Writes atomically (write_file_atomic). Tensors are laid out in the given order.
// Names must be unique, not "__metadata__", and each data size must match its shape (LAVA_CHECK).
void save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Validates everything (sizes, JSON, dtype, shapes against offsets, offset ranges and tiling,
// duplicate names) and throws one InputError naming the file on any problem.
SafetensorsFile load_safetensors(const std::string& path);

// The same, on bytes already in memory; `path` is only used in error messages.
SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& path);

}  // namespace lava
