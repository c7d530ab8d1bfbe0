#pragma once
// What a resumed run must repeat: the options that shape training, as ("--option", value) pairs in the order they
// are checked, and a fingerprint of the data (an entry "data"). Numbers are written in their shortest round-trip
// form, so a value compares equal exactly when it is the same number.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attention/objective.hpp"
#include "attention/variant_params.hpp"

namespace lava {

using RunIdentity = std::vector<std::pair<std::string, std::string>>;

// A number as text that reads back to the same bits (fmt's shortest round-trip form); inf, -inf and nan too.
template <class T>
std::string exact(T x) {
  return fmt::format("{}", x);
}

// Parses exact()'s text back (std::from_chars, so the locale plays no part); false unless all of `text` is one number.
bool parse_exact(const std::string& text, double& out);
bool parse_exact(const std::string& text, float& out);
bool parse_exact(const std::string& text, int64_t& out);
bool parse_exact(const std::string& text, int& out);

// The objective's options every task with attention variants repeats on a resume (--samples, --temperature,
// --warm-start, --att-kl, --att-kl-anneal, --crf-l2), in that order.
RunIdentity objective_identity(const ObjectiveOptions& objective);
// The wider family's hyperparameters of variant `v`, when it has any (VariantConfig::to_metadata), in key order.
RunIdentity variant_identity(AttnVariant v, const VariantConfig& variant);

// FNV-1a over bytes, for the data fingerprint of a run (collisions need not be guarded against: it catches a run
// resumed on other data by mistake, not an adversary).
class Fingerprint {
 public:
  Fingerprint& add(const void* data, size_t n);
  template <class T>
  Fingerprint& add_vector(const std::vector<T>& v) {
    const int64_t n = int64_t(v.size());
    add(&n, sizeof n);
    return add(v.data(), v.size() * sizeof(T));
  }
  Fingerprint& add(const std::string& s) { return add_vector(std::vector<char>(s.begin(), s.end())); }
  uint64_t value() const { return h_; }
  std::string hex() const { return fmt::format("{:016x}", h_); }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace lava
