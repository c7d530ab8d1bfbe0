#include "train/run_identity.hpp"

#include <charconv>
#include <map>

namespace lava {

namespace {
template <class T>
bool parse_number(const std::string& text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}
}  // namespace

bool parse_exact(const std::string& text, double& out) { return parse_number(text, out); }
bool parse_exact(const std::string& text, float& out) { return parse_number(text, out); }
bool parse_exact(const std::string& text, int64_t& out) { return parse_number(text, out); }
bool parse_exact(const std::string& text, int& out) { return parse_number(text, out); }

RunIdentity objective_identity(const ObjectiveOptions& o) {
  return {{"--samples", exact(o.samples)},   {"--temperature", exact(o.temperature)},
          {"--warm-start", exact(o.warm_start)}, {"--att-kl", exact(o.att_kl)},
          {"--att-kl-anneal", exact(o.kl_anneal)}, {"--crf-l2", exact(o.crf_l2)}};
}

RunIdentity variant_identity(AttnVariant v, const VariantConfig& variant) {
  std::map<std::string, std::string> meta;
  variant.to_metadata(v, meta);
  return RunIdentity(meta.begin(), meta.end());
}

Fingerprint& Fingerprint::add(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ull;
  return *this;
}

}  // namespace lava
