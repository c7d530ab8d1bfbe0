#include "tasks/model_metadata.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

const char* old_metadata_key(std::string_view key) {
  static const std::map<std::string_view, const char*> old = {
      {"emb-size", "emb"},           {"hidden-size", "hidden"},           {"attn-size", "attn_size"},
      {"inf-hidden", "inf_hidden"},  {"mlp-size", "mlp"},                 {"answer-emb", "answer_emb"},
      {"annotation-size", "annotation"}, {"latent-size", "latent"},      {"tf-layers", "tf_layers"},
      {"ff-size", "ff"},             {"dec-attn", "dec_attn"},            {"alpha-transform", "alpha_transform"},
      {"gauss-prior", "gauss_prior"}, {"bam-prior", "bam_prior"},         {"k-weibull", "k_weibull"},
      {"alpha-gamma", "alpha_gamma"}, {"beta-gamma", "beta_gamma"},       {"sigma-q", "sigma_q"},
      {"sigma-p", "sigma_p"},        {"crf-lambda", "crf_lambda"},        {"eval-samples", "eval_samples"}};
  const auto it = old.find(key);
  return it == old.end() ? nullptr : it->second;
}

const std::string& ModelMetadata::get(const char* key) const {
  auto it = meta_.find(key);
  if (const char* old = old_metadata_key(key); it == meta_.end() && old) it = meta_.find(old);
  if (it == meta_.end()) throw input_error(file_, 0, fmt::format("model metadata lacks \"{}\"", key));
  return it->second;
}

bool ModelMetadata::has(const char* key) const {
  const char* old = old_metadata_key(key);
  return meta_.count(key) || (old && meta_.count(old));
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
  unknown_value(key);
}

void ModelMetadata::unknown_value(const char* key) const {
  throw input_error(file_, 0,
                    fmt::format("model metadata \"{}\" has the unknown value {}", key, quote_input(get(key), '"')));
}

AttnVariant ModelMetadata::get_attn() const {
  const std::string& task = get("task");
  try {
    return attn_registry().from_metadata(get("attn"), task, [&](const char* flag) { return get_int(flag, 0, 1) == 1; });
  } catch (const UsageError&) {
    throw input_error(file_, 0, "unknown attention variant " + get("attn"));
  }
}

VariantConfig ModelMetadata::get_variant_config(AttnVariant v) const {
  VariantConfig c;
  std::map<std::string, std::string> keys;
  c.to_metadata(v, keys);  // the keys this variant writes
  auto positive = [&](const char* key) {
    const float x = get_float(key);
    if (!(x > 0) || !std::isfinite(x))
      throw input_error(file_, 0, fmt::format("model metadata \"{}\" = {} must be positive", key, x));
    return x;
  };
  if (keys.count("alpha-transform")) c.alpha_transform = get_choice("alpha-transform", {"exp", "softplus"});
  if (keys.count("gauss-prior")) c.gauss_prior = get_choice("gauss-prior", {"mean", "zero"});
  if (keys.count("bam-prior")) c.bam_prior = get_choice("bam-prior", {"contextual", "fixed"});
  if (keys.count("k-weibull")) c.k_weibull = positive("k-weibull");
  if (keys.count("alpha-gamma")) c.alpha_gamma = positive("alpha-gamma");
  if (keys.count("beta-gamma")) c.beta_gamma = positive("beta-gamma");
  if (keys.count("sigma-q")) c.sigma_q = positive("sigma-q");
  if (keys.count("sigma-p")) c.sigma_p = positive("sigma-p");
  if (keys.count("crf-lambda")) c.crf_lambda = positive("crf-lambda");
  if (keys.count("alpha")) {
    c.sparse_alpha = get_float("alpha");
    if (c.sparse_alpha != 2.f && c.sparse_alpha != 1.5f)
      throw input_error(file_, 0, fmt::format("model metadata \"alpha\" = {} must be 2 or 1.5", c.sparse_alpha));
  }
  if (keys.count("eval-samples")) c.eval_samples = get_int("eval-samples", 1, 100000);
  return c;
}

void ModelMetadata::expect_task(const char* task, const char* what) const {
  if (get("task") != task) throw input_error(file_, 0, fmt::format("not a {} model (task {})", what, get("task")));
}

}  // namespace lava
