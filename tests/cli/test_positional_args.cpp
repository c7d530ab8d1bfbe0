// Positional arguments (cli/positional_args.hpp): no command takes one, so a stray word after the options is a usage
// error (exit 2) naming it, never silently ignored.
#include <doctest/doctest.h>

#include "support/cli_runner.hpp"

TEST_CASE("positional args cli: an extra positional argument is a usage error naming it, for every command") {
  for (const char* args : {"toy extra", "toy --steps 3 extra", "gradcheck extra", "eval --model m --data d extra",
                           "eval --task vqa --model m extra", "eval --task seqvae --model m extra",
                           "train --data d extra", "train --task vqa extra", "train --task seqvae extra",
                           "translate --model m extra", "align --model m extra", "bench gemm extra",
                           "bench train extra", "data synth --out d extra", "data gettext extra",
                           "data scenes extra"}) {
    CAPTURE(args);
    const CliResult r = run_lava(args);
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("unexpected argument 'extra'") != std::string::npos);
    CHECK(r.out.empty());
  }
}
