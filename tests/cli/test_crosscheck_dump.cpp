// lava crosscheck-dump (src/cli/cmd_crosscheck.cpp): usage errors, and a dump that holds what
// tools/torch_reference.py reads. The agreement itself is `make crosscheck`'s (tests/README.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/task_registry.hpp"
#include "core/word_list.hpp"
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

TEST_CASE("crosscheck-dump: the tasks and make crosscheck's runs come from the task and variant registries") {
  const CliResult tasks = run_lava("crosscheck-dump --list-tasks");
  REQUIRE(tasks.code == 0);
  CHECK(tasks.out == "nmt\nvqa\nseqvae\n");  // the registered tasks with a model in tools/torch_reference.py
  // One run per cross-checked variant of the task, with the task's options; a sparse variant again with entmax.
  const CliResult nmt = run_lava("crosscheck-dump --task nmt --list-runs");
  REQUIRE(nmt.code == 0);
  const std::vector<std::string> lines = lines_of(nmt.out);
  const CliResult variants = run_lava("crosscheck-dump --task nmt --list-variants");
  const std::vector<std::string> names = lines_of(variants.out);
  REQUIRE(names.size() > 5);
  CHECK(std::find(lines.begin(), lines.end(), "nmt-" + names[1] + "-mlp --task nmt --attn " + names[1] +
                                                  " --score mlp --layers 2") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "nmt-var-sparse-entmax --task nmt --attn var-sparse --alpha 1.5") !=
        lines.end());
  CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("entmax") != std::string::npos; }) == 2);
  CHECK(lines.size() == names.size() + 2);
  CHECK(run_lava("crosscheck-dump --task seqvae --list-runs").out ==
        "seqvae-1 --task seqvae --layers 1\nseqvae-2 --task seqvae --layers 2\n");
  CHECK(run_lava("crosscheck-dump --task seqvae --list-variants").out.empty());
  // Captioning has no model in the reference: refused by name, one line.
  const CliResult caption = run_lava("crosscheck-dump --task caption --list-runs");
  CHECK(caption.code == 2);
  CHECK(caption.err.find("nmt|vqa|seqvae") != std::string::npos);
}

TEST_CASE("crosscheck-dump: an option the task's dump does not read is refused; every one it declares is taken") {
  TempDir tmp("xcheck_options");
  const std::string out = " --quiet --steps 1 --out " + tmp.file("x.safetensors");
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--task seqvae --attn soft", "--attn"},          {"--task seqvae --kmax 3", "--kmax"},
      {"--task seqvae --samples 2", "--samples"},       {"--task seqvae --tgt-len 4", "--tgt-len"},
      {"--task vqa --attn soft --kmax 3", "--kmax"},    {"--task vqa --attn soft --layers 1", "--layers"},
      {"--task vqa --attn soft --latent-size 2", "--latent-size"},
      {"--task nmt --attn soft --regions 3", "--regions"},
      {"--task nmt --attn soft --data " + tmp.file("corpus") + " --vocab 9", "--vocab"}};
  for (const auto& [args, option] : refused) {
    CAPTURE(args);
    const CliResult r = run_lava("crosscheck-dump " + args + out);
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(option + " is not read") != std::string::npos);
  }
  // Each task's declared options (TaskCrosscheck::options), every one given, are taken (the variant-dependent
  // --samples, --temperature and --alpha have tests/cli/test_variant_options.cpp; --data has the test above).
  const std::map<std::string, std::string> value = {
      {"attn", "soft"},    {"score", "dot"},      {"vocab", "10"},     {"answers", "6"},       {"regions", "3"},
      {"features", "4"},   {"src-len", "5"},      {"tgt-len", "4"},    {"emb-size", "4"},      {"hidden-size", "6"},
      {"layers", "1"},     {"attn-size", "3"},    {"inf-hidden", "4"}, {"latent-size", "2"},   {"kmax", "3"}};
  for (const char* task : {"nmt", "vqa", "seqvae"}) {
    std::string args = std::string("crosscheck-dump --task ") + task;
    for (const std::string& name : words_of(task_registry().find(task).crosscheck.options)) {
      if (name == "data" || name == "samples" || name == "temperature" || name == "alpha") continue;
      CAPTURE(name);
      REQUIRE(value.count(name));
      args += " --" + name + " " + value.at(name);
    }
    CAPTURE(args);
    const CliResult r = run_lava(args + out);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
  }
}
