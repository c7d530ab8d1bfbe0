// Loading a model's parameters (nn/checkpoint.hpp): a NaN or infinite value in any tensor is refused at load, in
// one line naming the file and the tensor, by every command that reads a model, before it computes anything.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "support/cli_runner.hpp"
#include "support/non_finite_model.hpp"
#include "support/tiny_nmt.hpp"

using namespace lava;

TEST_CASE("checkpoint cli: a model with a NaN or infinite parameter is refused at load, naming the tensor") {
  TinyNmt f;
  const std::string bad = f.tmp.file("nan.safetensors");
  for (float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()}) {
    CAPTURE(v);
    const std::string tensor = write_non_finite_copy(f.model_path, bad, v);
    for (const std::string& args : {f.eval(bad), "translate -q --model " + bad + " --input " + f.corpus_dir + "/test.de",
                                    "align -q --split test --model " + bad + " --data " + f.corpus_dir}) {
      CAPTURE(args);
      const CliResult r = run_lava(args);
      CHECK(r.code == 1);
      CHECK(r.err_lines() == 1);
      CHECK(r.err.find(bad) != std::string::npos);
      CHECK(r.err.find("\"" + tensor + "\"") != std::string::npos);
      CHECK(r.err.find("non-finite") != std::string::npos);
      CHECK(r.out.empty());
    }
  }
}
