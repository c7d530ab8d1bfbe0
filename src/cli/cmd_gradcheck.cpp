// lava gradcheck: every op's backward against 4-point central differences in double precision.
#include <cstdio>

#include "prob/gradcheck_cases.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"

namespace lava {

int cmd_gradcheck(int argc, char** argv) {
  CommandLine cl("gradcheck", "lava gradcheck [options]",
                 "Runs every differentiable op at several random shapes in double precision and compares its\n"
                 "backward pass with 4-point central differences. One row per case; exit status 1 if any fails.\n"
                 "rel_err = |analytic - numeric| / max(|analytic|, |numeric|, 1e-3).");
  cl.options().add_options()                                                             //
      ("tol", po::value<std::string>()->default_value("1e-6"), "largest relative error that passes")  //
      ("step", po::value<std::string>()->default_value("1e-4"), "finite-difference step h")           //
      ("max-elems", po::value<std::string>()->default_value("256"), "coordinates checked per input")  //
      ("op", po::value<std::string>(), "only the cases of this op");
  if (!cl.parse(argc, argv)) return 0;
  GradCheckOptions opt;
  opt.rel_tol = cl.get_double("tol", 0, 1);
  opt.h = cl.get_double("step", 1e-12, 1);
  opt.max_elems = cl.get_int("max-elems", 1, 1 << 30);
  opt.seed = cl.common().seed;
  const std::string only = cl.has("op") ? cl.get_string("op") : "";

  Table table;
  table.add_column("op").add_column("shape").add_column("checked").add_column("max_abs_err", ".2e");
  table.add_column("max_rel_err", ".2e").add_column("pass");
  int failed = 0, ran = 0;
  for (const GradCase& c : all_grad_cases()) {
    if (!only.empty() && c.op != only) continue;
    GradCheckResult r = gradcheck(c, opt);
    ++ran;
    failed += !r.pass;
    table.add_row({r.op, r.shape, double(r.checked), r.max_abs_err, r.max_rel_err, r.pass ? "pass" : "FAIL"});
  }
  if (ran == 0) cl.fail("--op: no case for '" + only + "'");
  table.print(stdout, cl.common().format);
  if (cl.common().format == OutputFormat::table)
    std::printf("%d of %d cases pass (tolerance %.1e)\n", ran - failed, ran, opt.rel_tol);
  return failed ? 1 : 0;
}

}  // namespace lava
