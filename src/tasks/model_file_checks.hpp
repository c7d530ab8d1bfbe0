#pragma once
// The checks a model file passes before any model is built from it: its format tag, and the sizes in its metadata
// against the shapes of its own tensors (the safetensors header gives every shape). Each task's loader calls both.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lava {

struct SafetensorsFile;

// The "format" entry must be the one this LAVA writes (kModelFormat). Absent: "not a LAVA model file (no format
// tag)"; another value: "model format X is not supported (this LAVA reads lava-model-1)".
inline constexpr const char* kModelFormat = "lava-model-1";
void expect_model_format(const std::map<std::string, std::string>& meta, const std::string& file);

// A size from the metadata and the dimension of a tensor in the same file that must equal it.
struct SizeInTensor {
  const char* key;     // the metadata entry, for the message
  int64_t size;        // its value
  std::string tensor;  // the tensor whose shape holds it
  int axis;            // the dimension of that tensor; -1: the tensor need only exist (a layer count's last layer)
};

// Before a model is built from its metadata: every size must be its tensor's dimension in the file (the header gives
// the shapes), so a hand-edited size ("layers = 100000") is one InputError naming the file, the entry and the tensor
// instead of an allocation the file's tensors do not back. Each task's loader lists the sizes its constructor uses.
void check_sizes_against_tensors(const SafetensorsFile& model, const std::string& file,
                                 const std::vector<SizeInTensor>& sizes);

}  // namespace lava
