#include "cli/variant_options.hpp"

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
      {"alpha-gamma", &V::alpha_gamma, 1e-6, 1e6, "BAM Weibull: fixed prior Gamma shape"},
      {"beta-gamma", &V::beta_gamma, 1e-6, 1e6, "BAM Weibull: prior Gamma rate"},
      {"sigma-q", &V::sigma_q, 1e-4, 1e3, "BAM log-normal: posterior sigma of log S"},
      {"sigma-p", &V::sigma_p, 1e-4, 1e3, "BAM log-normal: prior sigma of log S"},
      {"crf-lambda", &V::crf_lambda, 1e-6, 1e6, "linear-chain CRF: context scale lambda"},
      {"alpha", &V::sparse_alpha, 1.5, 2, "sparse-marginal, var-sparse: alpha of alpha-entmax, 2 (sparsemax) | 1.5"},
  };
  return table;
}

}  // namespace

void add_variant_options(po::options_description& options) {
  const VariantConfig variant;
  add_option_table(options, objective_table(), ObjectiveOptions());
  add_option_table(options, variant_table(), variant);
  options.add_options()                                                                                 //
      ("alpha-transform", po::value<std::string>()->default_value(variant.alpha_transform),
       "Dirichlet: exp (exp of the scores smoothly clamped to [-10, 10]) | softplus")                  //
      ("gauss-prior", po::value<std::string>()->default_value(variant.gauss_prior),
       "Gaussian context: prior N(mean of memory, I) | zero")                                                     //
      ("bam-prior", po::value<std::string>()->default_value(variant.bam_prior), "BAM: contextual | fixed");
}

void read_variant_options(const CommandLine& cl, VariantConfig& variant, ObjectiveOptions& objective) {
  read_option_table(cl, objective_table(), objective);
  if (objective.att_kl < 0 && objective.att_kl != -1.f) cl.fail("--att-kl must be -1 (the variant's default) or >= 0");
  read_option_table(cl, variant_table(), variant);
  if (variant.sparse_alpha != 2.f && variant.sparse_alpha != 1.5f) cl.fail("--alpha must be 2 (sparsemax) or 1.5");
  variant.alpha_transform = cl.get_choice("alpha-transform", {"exp", "softplus"});
  variant.gauss_prior = cl.get_choice("gauss-prior", {"mean", "zero"});
  variant.bam_prior = cl.get_choice("bam-prior", {"contextual", "fixed"});
}

}  // namespace lava
