#include "cli/eval_examples.hpp"

#include <algorithm>

#include "cli/task_registry.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "data/parallel_corpus.hpp"
#include "tasks/caption/data.hpp"
#include "tasks/seqvae/eval.hpp"
#include "tasks/seqvae/model_file.hpp"
#include "tasks/vqa/data.hpp"

namespace lava {

namespace {

CorpusSplit corpus_split(const CommandLine& cl) {
  const std::string s = cl.get_choice("split", {"train", "valid", "test"});
  return s == "train" ? CorpusSplit::train : s == "valid" ? CorpusSplit::valid : CorpusSplit::test;
}

std::string required(const CommandLine& cl, const char* name) {
  if (!cl.has(name)) cl.fail(std::string("--") + name + " is required");
  return cl.get_string(name);
}

int64_t nmt_examples(const CommandLine& cl) {
  CorpusOptions co;  // as eval_nmt_command: no max_len, so no split is length-filtered
  co.dir = required(cl, "data");
  co.src_lang = cl.get_string("src");
  co.tgt_lang = cl.get_string("tgt");
  return count_parallel_split(co, corpus_split(cl)).pairs;
}

int64_t seqvae_examples(const CommandLine& cl) {
  SeqVaeDataOptions d;  // as eval_seqvae_command
  d.dir = required(cl, "data");
  d.lang = cl.has("lang") ? cl.get_string("lang") : load_seqvae(required(cl, "model")).lang;
  if (d.lang.empty()) cl.fail("the model names no language: give --lang");
  d.max_len = 0;
  return count_parallel_split(seqvae_corpus_options(d), corpus_split(cl)).pairs;
}

int64_t vqa_examples(const CommandLine& cl) {
  VqaDataOptions d;  // load_vqa_split refuses a mix of --data and --features/--questions
  for (const auto& [name, field] : {std::pair{"data", &d.data_dir}, std::pair{"features", &d.features},
                                    std::pair{"questions", &d.questions}, std::pair{"mnist", &d.mnist_dir}})
    if (cl.has(name)) *field = cl.get_string(name);
  if (d.data_dir.empty() == (d.features.empty() && d.questions.empty()))
    cl.fail("give either --data DIR or --features FILE.npy --questions Q");
  return int64_t(load_vqa_split(d, cl.get_choice("split", {"train", "valid", "test"})).questions.size());
}

int64_t caption_examples(const CommandLine& cl) {
  const CaptionSplit s = load_caption_split(required(cl, "data"), cl.get_choice("split", {"train", "valid", "test"}),
                                            cl.has("mnist") ? cl.get_string("mnist") : "");
  return int64_t(s.captions.size());
}

}  // namespace

int64_t eval_examples(const std::vector<std::string>& args) {
  LAVA_CHECK(!args.empty() && args[0] == "eval", "eval_examples takes a lava eval command line");
  std::vector<std::string> words = args;
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  const std::string task = task_of(int(argv.size()), argv.data(), task_registry().default_task().name);
  const TaskCommands& t = task_registry().find(task);
  std::unique_ptr<CommandLine> cl = t.eval_command_line();
  cl->options().add_options()("task", po::value<std::string>(), "the evaluation's task");
  LAVA_CHECK(cl->parse(int(argv.size()), argv.data()), "an evaluation's options asked for --help");
  int64_t n = 0;
  if (task == "nmt") n = nmt_examples(*cl);
  else if (task == "seqvae") n = seqvae_examples(*cl);
  else if (task == "vqa") n = vqa_examples(*cl);
  else if (task == "caption") n = caption_examples(*cl);
  else throw InputError("the estimate cannot count the examples of a " + quote_input(task) + " evaluation");
  const int64_t limit = cl->get_int("limit", 0, INT64_MAX);
  return limit > 0 ? std::min(n, limit) : n;
}

}  // namespace lava
