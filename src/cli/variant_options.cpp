#include "cli/variant_options.hpp"

#include <fmt/format.h>

#include "attention/attention_variant.hpp"
#include "cli/option_table.hpp"

namespace lava {

namespace {

constexpr double kAny = 9.3e18;  // no upper bound on an int64 option

const OptionTable<ObjectiveOptions>& objective_table() {
  using O = ObjectiveOptions;
  static const OptionTable<O> table = {
      {"samples", &O::samples, 1, 1000, "wake-sleep (importance-weighted) training: samples from q"},
      {"temperature", &O::temperature, 1e-3, 1e3, "relaxed (Gumbel-softmax) samples: temperature"},
      {"warm-start", &O::warm_start, 0, kAny,
       "variants with q: updates before q takes over (categorical: p, f on the exact marginal and q on the ELBO "
       "with p, f fixed; Dirichlet: the Jensen bound with z from the prior)"},
      {"att-kl", &O::att_kl, -1, 1e6,
       "Gaussian context, BAM: KL weight in training (-1: 0.1 for the Gaussian context, 1 for BAM)"},
      {"att-kl-anneal", &O::kl_anneal, 0, kAny,
       "Gaussian context, BAM: midpoint (updates) of a tanh ramp of the KL weight (0 = none)"},
      {"crf-l2", &O::crf_l2, 0, 1e6, "linear-chain CRF: L2 penalty on pairwise scores"},
  };
  return table;
}

const OptionTable<VariantConfig>& variant_table() {
  using V = VariantConfig;
  static const OptionTable<V> table = {
      {"eval-samples", &V::eval_samples, 1, 100000,
       "sampled variants: samples per token of the importance-weighted likelihood"},
      {"k-weibull", &V::k_weibull, 1e-3, 1e6, "BAM Weibull: shape k"},
      {"alpha-gamma", &V::alpha_gamma, 1e-6, 1e6, "BAM Weibull: Gamma shape of the prior with --bam-prior fixed"},
      {"beta-gamma", &V::beta_gamma, 1e-6, 1e6, "BAM Weibull: prior Gamma rate"},
      {"sigma-q", &V::sigma_q, 1e-4, 1e3, "BAM log-normal: posterior sigma of log S"},
      {"sigma-p", &V::sigma_p, 1e-4, 1e3, "BAM log-normal: prior sigma of log S"},
      {"crf-lambda", &V::crf_lambda, 1e-6, 1e6, "linear-chain CRF: context scale lambda"},
      {"alpha", &V::sparse_alpha, 1.5, 2, "sparse-marginal, var-sparse: alpha of alpha-entmax, 2 (sparsemax) | 1.5"},
  };
  return table;
}

// The choice options, beside the two tables.
const char* const kChoiceOptions[] = {"alpha-transform", "gauss-prior", "bam-prior"};

// "read by V, W" (the task's variants that read option, AttnVariantInfo::options), for --help.
std::string readers_of(std::string_view option, std::string_view task) {
  std::string names;
  for (AttnVariant v : attn_registry().for_task(task))
    if (reads_option(v, option)) names += (names.empty() ? "" : ", ") + std::string(variant_info(v).name);
  return names.empty() ? fmt::format("no {} variant reads it", task) : "read by " + names;
}

// "--NAME is not read by VARIANT_WORDS V (it reads: --A, --B)", or "(it reads no variant options)".
std::string unread_option_message(AttnVariant v, const std::string& name, const std::string& variant_words) {
  const std::string reads = dashed_options(options_read(v));
  return fmt::format("--{} is not read by {} {} ({})", name, variant_words, variant_info(v).name,
                     reads.empty() ? "it reads no variant options" : "it reads: " + reads);
}

}  // namespace

std::vector<std::string> variant_option_names() {
  std::vector<std::string> names;
  for (const auto& row : objective_table()) names.push_back(row.name);
  for (const auto& row : variant_table()) names.push_back(row.name);
  names.insert(names.end(), std::begin(kChoiceOptions), std::end(kChoiceOptions));
  return names;
}

void refuse_unread_options(const CommandLine& cl, AttnVariant v, const std::vector<std::string>& names,
                           const std::string& variant_words) {
  for (const std::string& name : names)
    if (cl.has(name) && !reads_option(v, name)) cl.fail(unread_option_message(v, name, variant_words));
}

void add_variant_options(po::options_description& options, std::string_view task) {
  po::options_description group(fmt::format(
      "Attention variant options (each is read by the {} variants named after it; given, on the command line or in "
      "--config, with an --attn that does not read it, an option is refused)",
      task));
  const auto help = [&](const char* name, const char* text) {
    return fmt::format("{} [{}]", text, readers_of(name, task));
  };
  const VariantConfig variant;
  add_option_table(group, objective_table(), ObjectiveOptions(), help);
  add_option_table(group, variant_table(), variant, help);
  const std::pair<std::string, const char*> choices[] = {
      {variant.alpha_transform, "Dirichlet: exp (exp of the scores smoothly clamped to [-10, 10]) | softplus"},
      {variant.gauss_prior, "Gaussian context: prior N(mean of memory, I) | zero"},
      {variant.bam_prior, "BAM: contextual | fixed"}};
  for (size_t i = 0; i < std::size(kChoiceOptions); ++i)
    group.add_options()(kChoiceOptions[i], po::value<std::string>()->default_value(choices[i].first),
                        help(kChoiceOptions[i], choices[i].second).c_str());
  options.add(group);
}

void read_variant_options(const CommandLine& cl, AttnVariant attn, VariantConfig& variant,
                          ObjectiveOptions& objective) {
  read_option_table(cl, objective_table(), objective);
  if (objective.att_kl < 0 && objective.att_kl != -1.f) cl.fail("--att-kl must be -1 (the variant's default) or >= 0");
  read_option_table(cl, variant_table(), variant);
  if (variant.sparse_alpha != 2.f && variant.sparse_alpha != 1.5f) cl.fail("--alpha must be 2 (sparsemax) or 1.5");
  variant.alpha_transform = cl.get_choice("alpha-transform", {"exp", "softplus"});
  variant.gauss_prior = cl.get_choice("gauss-prior", {"mean", "zero"});
  variant.bam_prior = cl.get_choice("bam-prior", {"contextual", "fixed"});
  refuse_unread_options(cl, attn, variant_option_names());
  for (const std::string& name : options_read(attn))  // one it reads only with another option's value
    if (cl.has(name))
      if (const std::string why = attn->option_unread(variant, name); !why.empty())
        cl.fail(fmt::format("--{} is not read by --attn {} {}", name, variant_info(attn).name, why));
}

}  // namespace lava
