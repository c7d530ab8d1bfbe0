#pragma once
// Reading a model's architecture back from its checkpoint metadata (string → string, nn/checkpoint.hpp). Every
// model file (translation, VQA, sequence VAE) stores its configuration there; each problem is one InputError naming
// the file, so a foreign or hand-edited file never reaches a constructor with a negative size.
#include <initializer_list>
#include <map>
#include <optional>
#include <string>

#include "attention/variant.hpp"
#include "core/enum_names.hpp"
#include "attention/variant_params.hpp"
#include "train/option_row.hpp"

namespace lava {

// The sizes lava train accepts (its option ranges); a model file's metadata is held to the same.
inline constexpr int kMaxModelSize = 65536;  // embedding, hidden, scorer sizes
inline constexpr int kMaxModelLayers = 16;   // LSTM layers

// The key a file written before model-file keys were the command-line names used for `key` ("emb-size" -> "emb"),
// or nullptr. Files keep their keys; only reading looks here, so old files still load.
const char* old_metadata_key(std::string_view key);

class ModelMetadata {
 public:
  ModelMetadata(const std::map<std::string, std::string>& meta, std::string file) : meta_(meta), file_(std::move(file)) {}

  // The value of `key`, or in a file written before the keys were the command-line names, of its old key
  // (old_metadata_key); absent: "model metadata lacks "key"".
  const std::string& get(const char* key) const;
  bool has(const char* key) const;
  int get_int(const char* key, int lo, int hi = 1 << 26) const;   // a whole number in [lo, hi]
  float get_float(const char* key) const;
  const std::string& get_choice(const char* key, std::initializer_list<const char*> allowed) const;
  template <class E, size_t N>
  E get_enum(const char* key, const EnumName<E> (&names)[N]) const {  // one of the names (core/enum_names.hpp)
    if (const std::optional<E> e = enum_from_name(names, get(key))) return *e;
    unknown_value(key);
  }
  // Every row of an option table, by its command-line name, in the row's range (integers; a real is read as is).
  template <class S>
  void get_options(const OptionTable<S>& table, S& out) const {
    for (const OptionRow<S>& row : table)
      std::visit(
          [&](auto field) {
            using T = std::remove_reference_t<decltype(out.*field)>;
            if constexpr (std::is_same_v<T, std::string>)
              out.*field = get(row.name);
            else if constexpr (std::is_integral_v<T>)
              out.*field = T(get_int(row.name, int(row.lo), int(std::min(row.hi, double(1 << 30)))));
            else
              out.*field = T(get_float(row.name));
          },
          row.field);
  }
  AttnVariant get_attn() const;  // the "attn" entry (and the flags of variants stored as another) for the "task"
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
