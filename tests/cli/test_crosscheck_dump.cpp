// lava crosscheck-dump (src/cli/cmd_crosscheck.cpp): usage errors, and a dump that holds what
// tools/torch_reference.py reads. The agreement itself is `make crosscheck`'s (tests/README.md).
#include <doctest/doctest.h>

#include "nn/safetensors.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

TEST_CASE("crosscheck-dump: usage errors are one line and exit 2") {
  TempDir tmp("xcheck_usage");
  const std::string out = " --out " + tmp.file("x");
  for (const std::string& args : {std::string("crosscheck-dump --attn soft"), "crosscheck-dump --attn gauss-ctx" + out,
                                  "crosscheck-dump --task vqa --attn structured" + out,
                                  "crosscheck-dump --task nope" + out, "crosscheck-dump --hidden-size 7" + out}) {
    CAPTURE(args);
    const CliResult r = run_lava(args);
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
  }
}

TEST_CASE("crosscheck-dump: the file holds the parameters, batches, noise, gradients, losses and evaluation sums") {
  TempDir tmp("xcheck");
  for (const char* task : {"nmt", "vqa", "seqvae"}) {
    CAPTURE(task);
    const std::string path = (tmp.dir / (std::string(task) + ".safetensors")).string();
    const std::string attn = std::string(task) == "seqvae" ? "" : " --attn var-sample";
    REQUIRE(run_lava(std::string("crosscheck-dump --quiet --steps 5 --task ") + task + attn + " --out " + path).code ==
            0);
    const SafetensorsFile f = load_safetensors(path);
    std::map<std::string, const NamedTensor*> by_name;
    int params = 0, grads = 0, trained = 0;
    for (const NamedTensor& t : f.tensors) {
      by_name[t.name] = &t;
      params += t.name.rfind("param/", 0) == 0, grads += t.name.rfind("grad/", 0) == 0;
      trained += t.name.rfind("trained/", 0) == 0;
    }
    CHECK(params > 5);
    CHECK(grads == params);
    CHECK(trained == params);
    REQUIRE(by_name.count("loss"));
    CHECK(by_name["loss"]->data.size() == 5);
    CHECK(by_name.count("schedule"));
    CHECK(by_name.count("batch3/" + std::string(std::string(task) == "vqa" ? "features" : "src")));
    for (int t = 0; t < 5; ++t) CHECK(by_name.count("noise/" + std::to_string(t)));  // z, or the VAE's ε
    CHECK(f.metadata.at("task") == task);
    CHECK(f.metadata.count("eval/init/k0"));
    CHECK(f.metadata.count("eval/trained/k0"));
    CHECK(f.metadata.at("crosscheck/steps") == "5");
  }
}
