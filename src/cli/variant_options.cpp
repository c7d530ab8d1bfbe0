#include "cli/variant_options.hpp"

namespace lava {

void add_variant_options(po::options_description& options) {
  options.add_options()                                                                                      //
      ("samples", po::value<std::string>()->default_value("5"), "var-rws: samples from q")                   //
      ("temperature", po::value<std::string>()->default_value("1"), "var-gumbel: relaxation temperature")    //
      ("warm-start", po::value<std::string>()->default_value("0"),
       "var-*: updates before q takes over (categorical: p, f on the exact marginal and q on the ELBO with p, f "
       "fixed; var-dirichlet: the Jensen bound with z from the prior)")  //
      ("eval-samples", po::value<std::string>()->default_value("10"),
       "var-dirichlet, gauss-ctx, bam-*: samples per token of the importance-weighted likelihood")  //
      ("alpha-transform", po::value<std::string>()->default_value("exp"),
       "var-dirichlet: exp (exp of the scores smoothly clamped to [-10, 10]) | softplus")             //
      ("att-kl", po::value<std::string>()->default_value("-1"),
       "gauss-ctx, bam-*: KL weight in training (-1: 0.1 for gauss-ctx, 1 for bam)")                  //
      ("att-kl-anneal", po::value<std::string>()->default_value("0"),
       "gauss-ctx, bam-*: midpoint (updates) of a tanh ramp of the KL weight (0 = none)")            //
      ("gauss-prior", po::value<std::string>()->default_value("mean"), "gauss-ctx: prior N(mean of memory, I) | zero")  //
      ("bam-prior", po::value<std::string>()->default_value("contextual"), "bam-*: contextual | fixed")  //
      ("k-weibull", po::value<std::string>()->default_value("10"), "bam-weibull: Weibull shape k")      //
      ("alpha-gamma", po::value<std::string>()->default_value("1"), "bam-weibull: fixed prior Gamma shape")  //
      ("beta-gamma", po::value<std::string>()->default_value("1"), "bam-weibull: prior Gamma rate")     //
      ("sigma-q", po::value<std::string>()->default_value("0.5"), "bam-lognormal: posterior sigma of log S")  //
      ("sigma-p", po::value<std::string>()->default_value("1"), "bam-lognormal: prior sigma of log S")   //
      ("crf-lambda", po::value<std::string>()->default_value("2"), "structured: context scale lambda")   //
      ("crf-l2", po::value<std::string>()->default_value("0.005"), "structured: L2 penalty on pairwise scores");
}

void read_variant_options(const CommandLine& cl, VariantConfig& variant, ObjectiveOptions& objective) {
  objective.samples = int(cl.get_int("samples", 1, 1000));
  objective.temperature = float(cl.get_double("temperature", 1e-3, 1e3));
  objective.warm_start = cl.get_int("warm-start", 0, INT64_MAX);
  objective.att_kl = float(cl.get_double("att-kl", -1, 1e6));
  if (objective.att_kl < 0 && objective.att_kl != -1.f) cl.fail("--att-kl must be -1 (the variant's default) or >= 0");
  objective.kl_anneal = cl.get_int("att-kl-anneal", 0, INT64_MAX);
  objective.crf_l2 = float(cl.get_double("crf-l2", 0, 1e6));
  variant.eval_samples = int(cl.get_int("eval-samples", 1, 100000));
  variant.alpha_transform = cl.get_choice("alpha-transform", {"exp", "softplus"});
  variant.gauss_prior = cl.get_choice("gauss-prior", {"mean", "zero"});
  variant.bam_prior = cl.get_choice("bam-prior", {"contextual", "fixed"});
  variant.k_weibull = float(cl.get_double("k-weibull", 1e-3, 1e6));
  variant.alpha_gamma = float(cl.get_double("alpha-gamma", 1e-6, 1e6));
  variant.beta_gamma = float(cl.get_double("beta-gamma", 1e-6, 1e6));
  variant.sigma_q = float(cl.get_double("sigma-q", 1e-4, 1e3));
  variant.sigma_p = float(cl.get_double("sigma-p", 1e-4, 1e3));
  variant.crf_lambda = float(cl.get_double("crf-lambda", 1e-6, 1e6));
}

}  // namespace lava
