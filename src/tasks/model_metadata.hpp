#pragma once
// Reading a model's architecture back from its checkpoint metadata (string → string, nn/checkpoint.hpp). Every
// model file (translation, VQA, sequence VAE) stores its configuration there; each problem is one InputError naming
// the file, so a foreign or hand-edited file never reaches a constructor with a negative size.
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attention/variant.hpp"
#include "core/enum_names.hpp"
#include "attention/variant_params.hpp"

namespace lava {

struct SafetensorsFile;

// The sizes lava train accepts (its option ranges); a model file's metadata is held to the same.
inline constexpr int kMaxModelSize = 65536;  // embedding, hidden, scorer sizes
inline constexpr int kMaxModelLayers = 16;   // LSTM layers

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

class ModelMetadata {
 public:
  ModelMetadata(const std::map<std::string, std::string>& meta, std::string file) : meta_(meta), file_(std::move(file)) {}

  const std::string& get(const char* key) const;                  // absent: "model metadata lacks "key""
  int get_int(const char* key, int lo, int hi = 1 << 26) const;   // a whole number in [lo, hi]
  float get_float(const char* key) const;
  const std::string& get_choice(const char* key, std::initializer_list<const char*> allowed) const;
  template <class E, size_t N>
  E get_enum(const char* key, const EnumName<E> (&names)[N]) const {  // one of the names (core/enum_names.hpp)
    if (const std::optional<E> e = enum_from_name(names, get(key))) return *e;
    unknown_value(key);
  }
  AttnVariant get_attn() const;                                   // the "attn" entry
  // The hyperparameters variant v wrote (VariantConfig::to_metadata); defaults for the rest. Positive where they
  // must be.
  VariantConfig get_variant_config(AttnVariant v) const;
  // "task" must be `task`, else "not a <what> model (task X)".
  void expect_task(const char* task, const char* what) const;

 private:
  [[noreturn]] void unknown_value(const char* key) const;
  const std::map<std::string, std::string>& meta_;
  std::string file_;
};

}  // namespace lava
