// The attention variants' options on the command line (src/cli/variant_options.cpp): an option that the chosen
// --attn does not read (AttnVariantInfo::options) is a usage error of one line naming the option and the variant,
// whether given on the command line or in --config, in lava train (every task), lava eval (--eval-samples) and lava
// crosscheck-dump; and every variant trains with each option it declares set. That a declared option changes what
// the variant computes, and an undeclared one changes nothing, is tests/attention/test_variant_options_read.cpp.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attention/variant.hpp"
#include "cli/variant_options.hpp"
#include "core/atomic_file.hpp"
#include "data/synth_task.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_scenes.hpp"
#include "tasks/vqa/vqa_fixture.hpp"

using namespace lava;

namespace {

// The captioning task's options that only sat-hard reads (cmd_caption.cpp refuses them for the other variants).
const std::vector<std::string> kSatOptions = {"sat-reinforce", "sat-entropy", "sat-expected", "sat-baseline-decay"};

// A valid value, other than the default, for every option a variant may declare.
const std::map<std::string, std::string>& option_values() {
  static const std::map<std::string, std::string> values = {
      {"samples", "2"},          {"temperature", "0.5"},   {"warm-start", "1"},      {"att-kl", "0.5"},
      {"att-kl-anneal", "10"},   {"crf-l2", "0.01"},       {"eval-samples", "3"},    {"k-weibull", "5"},
      {"alpha-gamma", "2"},      {"beta-gamma", "3"},      {"sigma-q", "0.3"},       {"sigma-p", "2"},
      {"crf-lambda", "1.5"},     {"alpha", "1.5"},         {"alpha-transform", "softplus"},
      {"gauss-prior", "zero"},   {"bam-prior", "fixed"},   {"sat-reinforce", "0.5"}, {"sat-entropy", "0.1"},
      {"sat-expected", "0.9"},   {"sat-baseline-decay", "0.5"}};
  return values;
}

// " --a 1 --b 2": every option variant v declares, each at its value above.
std::string declared_options(AttnVariant v) {
  std::string args;
  for (const std::string& name : options_read(v)) args += " --" + name + " " + option_values().at(name);
  return args;
}

// A synthetic translation corpus (24/6/6 pairs), a tiny VQA data set and a tiny scenes directory, built once.
struct Fixture {
  TempDir tmp{"variant_options"};
  std::string corpus = tmp.file("synth");
  vqa_test::TinyVqa vqa{8, 3, 4, 24};
  std::string scenes = tiny_scenes(tmp);

  Fixture() {
    SynthOptions o;
    o.out_dir = corpus;
    o.train = 24, o.valid = 6, o.test = 6, o.min_len = 3, o.max_len = 6, o.vocab = 20, o.quiet = true;
    build_synth_task(o);
  }
  // The data options of `lava train --task T`, and tiny sizes.
  std::string data(const std::string& task) const {
    if (task == "nmt") return "--task nmt --data " + corpus + " --emb-size 4 --hidden-size 6 --attn-size 4 --inf-hidden 4";
    if (task == "vqa")
      return "--task vqa --features " + vqa.features + " --questions " + vqa.questions +
             " --emb-size 4 --hidden-size 6 --attn-size 4 --mlp-size 6 --answer-emb 3";
    return "--task caption --data " + scenes + " --emb-size 4 --hidden-size 6 --attn-size 4 --annotation-size 4";
  }
};

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

Fixture& fixture() {
  static Fixture f;
  return f;
}

}  // namespace

TEST_CASE("variant options: every option a variant declares is a variant option, and the help names its readers") {
  std::set<std::string> known(kSatOptions.begin(), kSatOptions.end());
  for (const std::string& name : variant_option_names()) {
    CAPTURE(name);
    CHECK(known.insert(name).second);
    CHECK(option_values().count(name) == 1);  // the tests below have a value for it
  }
  CHECK(known.size() == option_values().size());
  std::map<std::string, std::string> help_of;  // each task's `lava train --help`, run once
  for (const char* task : {"nmt", "vqa", "caption"}) {
    const CliResult r = run_lava(std::string("train --task ") + task + " --help");
    REQUIRE(r.code == 0);
    help_of[task] = r.out;
  }
  for (AttnVariant v : attn_registry().all()) {
    const std::string variant = variant_info(v).name;
    CAPTURE(variant);
    for (const std::string& name : options_read(v)) {
      CAPTURE(name);
      CHECK(known.count(name) == 1);  // a misspelt declaration would refuse the option it means
      CHECK(reads_option(v, name));
      // The command line of each task the variant runs offers the option (sat-* are captioning's own).
      for (const char* task : {"nmt", "vqa", "caption"})
        if (supports_task(v, task) && name.rfind("sat-", 0) != 0)
          CHECK(help_of[task].find("--" + name + " ") != std::string::npos);
    }
  }
  // --help says which variants read each option, from their declarations.
  std::string help;  // its words, one space apart (Boost wraps the lines)
  for (const std::string& word : split_words(help_of["nmt"])) help += word + " ";
  CHECK(help.find("an option is refused") != std::string::npos);
  CHECK(help.find("[read by var-gumbel]") != std::string::npos);
  CHECK(help.find("[read by sparse-marginal, var-sparse]") != std::string::npos);
  CHECK(help.find("[read by var-enum, var-sample, var-gumbel, var-rws, var-dirichlet]") != std::string::npos);
}

TEST_CASE("variant options: an option the chosen --attn does not read is refused: exit 2, one line naming both") {
  const Fixture& f = fixture();
  CliResult r = run_lava("train " + f.data("nmt") + " --attn marginal --alpha 1.5 --max-steps 1");
  CHECK(r.code == 2);
  CHECK(r.err == "lava train: --alpha is not read by --attn marginal (it reads no variant options)\n");
  r = run_lava("train " + f.data("nmt") + " --attn var-enum --temperature 0.5 --max-steps 1");
  CHECK(r.code == 2);
  CHECK(r.err == "lava train: --temperature is not read by --attn var-enum (it reads: --warm-start)\n");

  struct Case {
    const char* task;
    const char* attn;
    const char* option;
  };
  const Case cases[] = {{"nmt", "soft", "samples"},          {"nmt", "gauss-ctx", "k-weibull"},
                        {"nmt", "structured", "eval-samples"}, {"nmt", "var-sparse", "warm-start"},
                        {"nmt", "var-dirichlet", "att-kl"},   {"nmt", "bam-lognormal", "alpha-gamma"},
                        {"nmt", "sigmoid", "crf-lambda"},     {"nmt", "var-rws", "temperature"},
                        {"nmt", "var-gumbel", "samples"},     {"nmt", "gauss-ctx", "bam-prior"},
                        {"vqa", "marginal", "alpha"},         {"vqa", "hard-sample", "warm-start"},
                        {"vqa", "bam-weibull", "gauss-prior"}, {"caption", "var-enum", "eval-samples"},
                        {"caption", "soft", "sat-entropy"},   {"caption", "marginal", "alpha"}};
  for (const Case& c : cases) {
    const std::string option = std::string("--") + c.option;
    const std::string task = c.task, attn = c.attn;
    CAPTURE(task);
    CAPTURE(attn);
    CAPTURE(option);
    REQUIRE(!reads_option(parse_attn_variant(c.attn, c.task), c.option));
    r = run_lava("train " + f.data(c.task) + " --attn " + c.attn + " " + option + " " + option_values().at(c.option) +
                 " --max-steps 1 -q");
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(option + " is not read by --attn " + c.attn + " (") != std::string::npos);
  }

  // An option read only with another's value: the Weibull prior's fixed shape, with the contextual prior.
  r = run_lava("train " + f.data("nmt") + " --attn bam-weibull --alpha-gamma 2 --max-steps 1 -q");
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("lava train: --alpha-gamma is not read by --attn bam-weibull with --bam-prior contextual (") == 0);

  // From --config as from the command line; an option at its default value is not refused unless given.
  const std::string config = f.tmp.file("alpha.ini");
  write_file_atomic(config, "alpha = 1.5\n");
  r = run_lava("train " + f.data("nmt") + " --attn marginal --config " + config + " --max-steps 1 -q");
  CHECK(r.code == 2);
  CHECK(r.err == "lava train: --alpha is not read by --attn marginal (it reads no variant options)\n");
  r = run_lava("train " + f.data("nmt") + " --attn var-gumbel --temperature 0 --max-steps 1 -q");
  CHECK(r.code == 2);  // a bad value is reported as such before the option's readers are asked
  CHECK(r.err.find("--temperature: 0 is outside") != std::string::npos);

  // lava eval --eval-samples: read by the sampled variants only.
  const std::string model = f.tmp.file("soft.safetensors");
  r = run_lava("train " + f.data("nmt") + " --attn soft --max-steps 1 --epochs 1 -q --save " + model);
  REQUIRE(r.code == 0);
  r = run_lava("eval --data " + f.corpus + " --model " + model + " --eval-samples 4");
  CHECK(r.code == 2);
  CHECK(r.err == "lava eval: --eval-samples is not read by the model's --attn soft (it reads no variant options)\n");
  CHECK(run_lava("eval --data " + f.corpus + " --model " + model + " -q").code == 0);

  // lava crosscheck-dump takes --samples, --temperature and --alpha under the same rule.
  const std::string dump = " --steps 1 --quiet --out " + f.tmp.file("dump.safetensors");
  r = run_lava("crosscheck-dump --task nmt --attn soft --temperature 0.25" + dump);
  CHECK(r.code == 2);
  CHECK(r.err == "lava crosscheck-dump: --temperature is not read by --attn soft (it reads no variant options)\n");
  r = run_lava("crosscheck-dump --task vqa --attn marginal --alpha 1.5" + dump);
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(run_lava("crosscheck-dump --task nmt --attn var-gumbel --temperature 0.25" + dump).code == 0);
}

TEST_CASE("variant options: every variant trains with each option it declares set (nmt, vqa, caption)") {
  const Fixture& f = fixture();
  for (const char* task : {"nmt", "vqa", "caption"})
    for (AttnVariant v : attn_registry().for_task(task)) {
      if (options_read(v).empty()) continue;  // nothing to accept beyond what the task's own tests run
      const std::string args = "train " + f.data(task) + " --attn " + variant_info(v).name + declared_options(v) +
                               " --max-steps 1 --epochs 1 --batch-size 8 -q";
      CAPTURE(args);
      const CliResult r = run_lava(args);
      CHECK(r.code == 0);
      CHECK(r.err.empty());
    }
}

TEST_CASE("variant options: lava sweep refuses a run that sets an option its --attn does not read, before running") {
  TempDir d("variant_options_sweep");
  const std::string global = d.file("global.ini"), sections = d.file("sections.ini");
  write_file_atomic(global, "data = corpus\ngrid.attn = var-enum, soft\nwarm-start = 5\n");
  CliResult r = run_lava("sweep plan " + global);
  CHECK(r.code != 0);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(global + ": run ") != std::string::npos);
  CHECK(r.err.find("--warm-start is not read by --attn soft (it reads no variant options)") != std::string::npos);
  // In the section of the variant that reads it, the same option plans; so does a grid over a variant option.
  write_file_atomic(sections, "data = corpus\ngrid.attn = var-enum, soft\n[attn var-enum]\nwarm-start = 5\n");
  CHECK(run_lava("sweep plan " + sections).code == 0);
  write_file_atomic(sections, "data = corpus\nattn = var-rws\ngrid.samples = 2, 3\n");
  CHECK(run_lava("sweep plan " + sections).code == 0);
  r = run_lava("sweep plan " + sections + " --set temperature=0.5");
  CHECK(r.code != 0);
  CHECK(r.err.find("--temperature is not read by --attn var-rws (it reads: --samples, --warm-start)") !=
        std::string::npos);
  // An option the variant reads only under another option's value: bam-weibull's --alpha-gamma is the fixed
  // prior's, so with the default contextual prior lava train would refuse it, and so does the sweep, up front.
  write_file_atomic(sections, "data = corpus\nattn = bam-weibull\nalpha-gamma = 2\n");
  r = run_lava("sweep plan " + sections);
  CHECK(r.code != 0);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(sections + ": run ") != std::string::npos);
  CHECK(r.err.find("--alpha-gamma is not read by --attn bam-weibull with --bam-prior contextual") != std::string::npos);
  CHECK(run_lava("sweep plan " + sections + " --set bam-prior=fixed").code == 0);
}
