// lava toy: exact marginal likelihood, soft attention, the Jensen bound and a fitted variational posterior on one
// example, in double precision, with the identity log p − ELBO = KL(q ‖ posterior) checked at every step.
#include <cmath>
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "tasks/toy/toy.hpp"
#include "core/json.hpp"

namespace lava {

namespace {

void print_table(const ToyResult& r, const ToyParams& p, const ToyOptions& opt) {
  std::printf("toy: K=%d states, D=%d, H=%d, C=%d labels, observed label y=%d\n\n", p.K, p.D, p.H, p.C, p.label);
  Table states;
  states.add_column("state").add_column("prior p", ".4f").add_column("f(x_i)_y", ".4f");
  states.add_column("posterior", ".4f").add_column("q", ".4f");
  for (int i = 0; i < p.K; ++i)
    states.add_row({double(i), r.prior[size_t(i)], r.likelihood[size_t(i)], r.posterior[size_t(i)], r.q[size_t(i)]});
  states.print(stdout, OutputFormat::table);

  std::printf("\n");
  Table figs;
  figs.add_column("quantity").add_column("value", ".8f").add_column("meaning");
  figs.add_row({"log_p_soft", r.log_p_soft, "log f(E_p[x])_y: average the features, then predict"});
  figs.add_row({"log_p_exact", r.log_p_exact, "log sum_i p_i f(x_i)_y: predict per state, then average"});
  figs.add_row({"jensen", r.jensen, "sum_i p_i log f(x_i)_y = ELBO at q = p"});
  figs.add_row({"elbo", r.elbo, "sum_i q_i log f(x_i)_y - KL(q||p) after the fit"});
  figs.add_row({"kl_q_prior", r.kl_q_prior, "KL(q || p)"});
  figs.add_row({"kl_gap", r.kl_gap, "log_p_exact - elbo"});
  figs.add_row({"kl_q_posterior", r.kl_q_posterior, "KL(q || posterior), computed directly"});
  figs.add_row({"identity_error", r.identity_error, "|kl_gap - kl_q_posterior|"});
  figs.print(stdout, OutputFormat::table);

  std::printf("\nELBO climbing toward log p = %.8f (Adam, lr %g, from uniform q):\n", r.log_p_exact, opt.lr);
  Table climb;
  climb.add_column("step").add_column("elbo", ".8f").add_column("kl_gap", ".3e").add_column("kl_q_posterior", ".3e");
  for (size_t i = 0; i < r.trace.size(); ++i) {
    const int s = r.trace[i].step;
    const bool shown = s == 0 || i + 1 == r.trace.size() || (s & (s - 1)) == 0;  // 0, powers of two, last
    if (shown) climb.add_row({double(s), r.trace[i].elbo, r.trace[i].kl_gap, r.trace[i].kl_q_posterior});
  }
  climb.print(stdout, OutputFormat::table);
  std::printf("\nlargest |kl_gap - KL(q||posterior)| over all steps: %.2e\n", r.max_identity_error);
  std::printf("scalar example: z in {0, 2} equally likely, f(z) = z^2: f(E[z]) = %g, E[f(z)] = %g\n",
              r.scalar_f_of_mean, r.scalar_mean_of_f);
}

std::string summary_json(const ToyResult& r, const ToyParams& p) {
  JsonLine j;
  j.add("K", p.K).add("label", p.label);
  j.add("prior", r.prior).add("likelihood", r.likelihood).add("posterior", r.posterior).add("q", r.q);
  j.add("log_p_soft", r.log_p_soft).add("log_p_exact", r.log_p_exact).add("jensen", r.jensen);
  j.add("elbo", r.elbo).add("kl_q_prior", r.kl_q_prior).add("kl_q_posterior", r.kl_q_posterior);
  j.add("kl_gap", r.kl_gap).add("identity_error", r.identity_error).add("max_identity_error", r.max_identity_error);
  JsonLine scalar;
  scalar.add("f_of_mean", r.scalar_f_of_mean).add("mean_of_f", r.scalar_mean_of_f);
  j.add_raw("scalar_example", scalar.str());
  return j.str();
}

}  // namespace

int cmd_toy(int argc, char** argv) {
  CommandLine cl("toy", "lava toy [--params FILE | --states K --dim D --hidden H --labels C] [options]",
                 "One observation with K attention states, in double precision. Compares soft attention\n"
                 "log f(E_p[x])_y with the exact marginal log sum_i p_i f(x_i)_y and the Jensen bound, then fits\n"
                 "q = softmax(lambda) by Adam on the ELBO and checks log p - ELBO = KL(q || posterior).\n"
                 "--params reads JSON with keys features (K rows of D), scores (K), W1 (H rows of D), b1 (H),\n"
                 "W2 (C rows of H), b2 (C), label. Output: --format json prints one object (the last line);\n"
                 "--trace adds one line per step before it. csv prints the trace with --trace, else the summary.");
  cl.options().add_options()                                                                        //
      ("params", po::value<std::string>(), "JSON file with the generative parameters")              //
      ("states", po::value<std::string>()->default_value("8"), "K, attention states (random parameters)")  //
      ("dim", po::value<std::string>()->default_value("4"), "D, feature size")                      //
      ("hidden", po::value<std::string>()->default_value("16"), "H, hidden units of f")              //
      ("labels", po::value<std::string>()->default_value("5"), "C, labels of f")                     //
      ("steps", po::value<std::string>()->default_value("3000"), "Adam steps on the ELBO")           //
      ("lr", po::value<std::string>()->default_value("0.3"), "Adam learning rate")                 //
      ("trace", po::bool_switch(), "also print the ELBO and KL gap at every step");
  if (!cl.parse(argc, argv)) return 0;
  ToyOptions opt;
  opt.steps = int(cl.get_int("steps", 0, 10000000));
  opt.lr = cl.get_double("lr", 1e-12, 100);
  const ToyParams params =
      cl.has("params") ? toy_params_from_json(cl.get_string("params"))
                       : toy_params_random(cl.common().seed, int(cl.get_int("states", 1, 100000)),
                                           int(cl.get_int("dim", 1, 100000)), int(cl.get_int("hidden", 1, 100000)),
                                           int(cl.get_int("labels", 2, 100000)));
  const ToyResult r = run_toy(params, opt);
  const bool trace = cl.vm()["trace"].as<bool>();

  switch (cl.common().format) {
    case OutputFormat::table:
      print_table(r, params, opt);
      break;
    case OutputFormat::json:
      if (trace)
        for (const ToyTracePoint& t : r.trace) {
          JsonLine j;
          j.add("step", t.step).add("elbo", t.elbo).add("kl_gap", t.kl_gap).add("kl_q_posterior", t.kl_q_posterior);
          std::printf("%s\n", j.str().c_str());
        }
      std::printf("%s\n", summary_json(r, params).c_str());
      break;
    case OutputFormat::csv: {
      Table t;
      if (trace) {
        t.add_column("step").add_column("elbo").add_column("kl_gap").add_column("kl_q_posterior");
        for (const ToyTracePoint& p : r.trace) t.add_row({double(p.step), p.elbo, p.kl_gap, p.kl_q_posterior});
      } else {
        for (const char* c : {"log_p_soft", "log_p_exact", "jensen", "elbo", "kl_q_prior", "kl_q_posterior", "kl_gap",
                              "identity_error"})
          t.add_column(c);
        t.add_row({r.log_p_soft, r.log_p_exact, r.jensen, r.elbo, r.kl_q_prior, r.kl_q_posterior, r.kl_gap,
                   r.identity_error});
      }
      t.print(stdout, OutputFormat::csv);
      break;
    }
  }
  return 0;
}

}  // namespace lava
