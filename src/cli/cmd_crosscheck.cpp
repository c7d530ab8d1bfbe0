// lava crosscheck-dump: everything an independent implementation (tools/torch_reference.py) needs to recompute one
// model's training and evaluation, and LAVA's own figures to compare with, in one safetensors file.
//
// From one initial model (init_uniform(--init, --seed)) LAVA runs --steps Adam updates with dropout off, clipped by
// global norm as `lava train` does, loss normalised per sentence: on --batches fixed random batches, step t on batch
// t mod --batches; or, with --data DIR, on the corpus's training batches in `lava train`'s order (a long run, to
// compare whole trainings). The file holds (safetensors is F32 only: integer arrays are stored as exact floats):
//   param/<name>      the initial parameters          trained/<name>   the parameters after the last update
//   grad/<name>       d loss / d param at step 0       batch<k>/<field> src, src_len, tgt_in, tgt_out, tgt_len
//   schedule          per step, the batch k it reads   eval<k>/<field>  the batches the evaluation sums cover
//   noise/<t>         step t's draws (sampled variants: indices z, or Gumbel g; objective.hpp ObjectiveOptions)
//   loss, value, kl   per step: the differentiated loss, Σ value / B (no surrogates) and Σ KL / B
// and in its metadata the model configuration, the run's options, and the evaluation sums (eval/<when>/k<K>: tokens,
// log_lik, elbo, kl, kl_posterior, entropy, correct) of the initial and the trained model, exact and K-max (the
// random batches themselves, or the corpus's test split).
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/crosscheck_dump.hpp"
#include "cli/task_registry.hpp"
#include "data/parallel_corpus.hpp"
#include "core/check.hpp"
#include "tasks/nmt/seq2seq.hpp"
#include "nn/optim.hpp"
#include "nn/safetensors.hpp"
#include "core/json.hpp"
#include "core/word_list.hpp"

namespace lava::crosscheck {

void add_tensor(std::vector<NamedTensor>& out, std::string name, std::vector<int64_t> shape, const float* v) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  out.push_back({std::move(name), std::move(shape), std::vector<float>(v, v + n)});
}

void add_params(std::vector<NamedTensor>& out, const std::string& prefix, ParamStore<float>& ps, bool grads) {
  for (const auto& p : ps.params()) {
    std::vector<int64_t> shape;
    for (int d = 0; d < p.shape.rank; ++d) shape.push_back(p.shape[d]);
    add_tensor(out, prefix + p.name, shape, (grads ? ps.grads() : ps.values()) + p.offset);
  }
}

// Random sentence pairs: lengths uniform in [1, max], tokens uniform over the non-special ids.
std::vector<SentencePair> random_pairs(int n, int src_len, int tgt_len, int src_vocab, int tgt_vocab,
                                       const CounterRng& rng) {
  std::vector<SentencePair> pairs(static_cast<size_t>(n));
  uint64_t k = 0;
  const auto draw = [&](int lo, int hi) { return lo + int(rng.uniform(k++) * (hi - lo + 1)); };
  for (int i = 0; i < n; ++i) {
    SentencePair& p = pairs[size_t(i)];
    p.line = i + 1;
    p.src.resize(size_t(draw(1, src_len)));
    p.tgt.resize(size_t(draw(1, tgt_len)));
    for (int32_t& t : p.src) t = draw(Vocab::kNumSpecial, src_vocab - 1);
    for (int32_t& t : p.tgt) t = draw(Vocab::kNumSpecial, tgt_vocab - 1);
  }
  return pairs;
}

std::string eval_json(const AttentionEvalSums& s, int64_t correct) {
  JsonLine j;
  j.add("tokens", s.tokens).add("log_lik", s.log_lik).add("elbo", s.elbo).add("kl", s.kl);
  j.add("kl_posterior", s.kl_posterior).add("entropy", s.entropy).add("correct", double(correct));
  return j.str();
}

float sparse_alpha(const CommandLine& cl) {
  const float alpha = float(cl.get_double("alpha", 1.5, 2));
  if (alpha != 2.f && alpha != 1.5f) cl.fail("--alpha must be 2 (sparsemax) or 1.5");
  return alpha;
}

// The variants of `task` that tools/torch_reference.py implements (AttnVariantInfo::crosscheck), joined by sep.
std::string crosschecked_variants(std::string_view task, const char* sep) {
  std::string s;
  for (AttnVariant v : attn_registry().for_task(task))
    if (variant_info(v).crosscheck) s += (s.empty() ? "" : sep) + std::string(variant_info(v).name);
  return s;
}

void check_covered(const CommandLine& cl, std::string_view task, AttnVariant v) {
  if (!variant_info(v).crosscheck) cl.fail("--attn: the cross-check covers " + crosschecked_variants(task, ", "));
}

// The run's options in the metadata, then the file; one line on stderr.
void write_dump(const CommandLine& cl, const CrosscheckOptions& o, const ObjectiveOptions& obj,
                const std::string& path, const std::vector<NamedTensor>& out, std::map<std::string, std::string> meta,
                const std::vector<float>& loss) {
  meta["crosscheck/steps"] = std::to_string(o.steps);
  meta["crosscheck/lr"] = fmt::format("{}", o.lr);
  meta["crosscheck/clip"] = fmt::format("{}", o.clip);
  meta["crosscheck/samples"] = std::to_string(obj.samples);
  meta["crosscheck/temperature"] = fmt::format("{}", obj.temperature);
  save_safetensors(path, out, meta);
  if (!cl.common().quiet)
    std::fprintf(stderr, "lava crosscheck-dump: %s %s, %d steps, loss %.6f -> %.6f, wrote %s\n", meta["task"].c_str(),
                 meta["attn"].c_str(), o.steps, double(loss.front()), double(loss.back()), path.c_str());
}

void add_batch(std::vector<NamedTensor>& out, const std::string& n, const Batch& b) {
  add_ints(out, n + "src", {b.B, b.S}, b.src);
  add_ints(out, n + "src_len", {b.B}, b.src_len);
  add_ints(out, n + "tgt_in", {b.B, b.T}, b.tgt_in);
  add_ints(out, n + "tgt_out", {b.B, b.T}, b.tgt_out);
  add_ints(out, n + "tgt_len", {b.B}, b.tgt_len);
}

int dump_nmt(const CommandLine& cl, const CrosscheckOptions& o, const std::string& out_path) {
  Seq2SeqConfig cfg;
  cfg.attn = parse_attn_variant(cl.get_string("attn"), "nmt");
  cfg.score = cl.get_enum("score", kNmtScoreNames);
  ParallelCorpus corpus;
  if (cl.has("data")) {
    for (const char* name : {"vocab", "src-len", "tgt-len", "batches"})
      if (cl.has(name)) cl.fail(fmt::format("--{} is not read with --data (the corpus gives the batches)", name));
    CorpusOptions co;
    co.dir = cl.get_string("data");
    co.max_len = 50;  // as lava train
    corpus = load_parallel_corpus(co, VocabOptions{}, VocabOptions{});
    cfg.src_vocab = corpus.src_vocab.size(), cfg.tgt_vocab = corpus.tgt_vocab.size();
  } else {
    cfg.src_vocab = int(cl.get_int("vocab", Vocab::kNumSpecial + 1, 1 << 20));
    cfg.tgt_vocab = cfg.src_vocab + 1;  // different sizes, so a swapped side cannot pass
  }
  cfg.emb = int(cl.get_int("emb-size", 1, 4096));
  cfg.hidden = int(cl.get_int("hidden-size", 2, 4096));
  cfg.layers = int(cl.get_int("layers", 1, 8));
  cfg.attn_size = int(cl.get_int("attn-size", 1, 4096));
  cfg.inf_hidden = int(cl.get_int("inf-hidden", 2, 4096));
  if (cfg.hidden % 2 || cfg.inf_hidden % 2) cl.fail("--hidden and --inf-hidden must be even");
  cfg.dropout = 0;
  cfg.variant.sparse_alpha = sparse_alpha(cl);
  check_covered(cl, "nmt", cfg.attn);
  ObjectiveOptions obj;
  obj.samples = int(cl.get_int("samples", 1, 1000));
  obj.temperature = float(cl.get_double("temperature", 1e-3, 1e3));
  refuse_unread_options(cl, cfg.attn, {"samples", "temperature", "alpha"});

  Seq2Seq model(cfg);
  model.ps.init_uniform(float(o.init), o.seed);
  std::vector<NamedTensor> out;
  add_params(out, "param/", model.ps, false);
  // The training batches, the batch of each step, and the evaluation batches.
  std::vector<Batch> batches, eval_set;
  std::vector<int32_t> schedule;
  if (cl.has("data")) {
    BatchOptions bopt;
    bopt.batch_size = o.batch_size;
    for (int64_t epoch = 0; int(batches.size()) < o.steps; ++epoch)
      for (const std::vector<int>& idx : train_batches(corpus.train.pairs, bopt, o.seed, epoch))
        if (int(batches.size()) < o.steps) batches.push_back(make_batch(corpus.train.pairs, idx));
    for (int t = 0; t < o.steps; ++t) schedule.push_back(t);
    for (const std::vector<int>& idx : eval_batches(corpus.test.pairs, 32)) eval_set.push_back(make_batch(corpus.test.pairs, idx));
  } else {
    const std::vector<SentencePair> pairs =
        random_pairs(o.batches * o.batch_size, o.src_len, o.tgt_len, cfg.src_vocab, cfg.tgt_vocab,
                     CounterRng(o.seed, stream_id("crosscheck/pairs")));
    for (int k = 0; k < o.batches; ++k) {
      std::vector<int> idx(size_t(o.batch_size));
      for (int i = 0; i < o.batch_size; ++i) idx[size_t(i)] = k * o.batch_size + i;
      batches.push_back(make_batch(pairs, idx));
    }
    for (int t = 0; t < o.steps; ++t) schedule.push_back(t % o.batches);
    eval_set = batches;
  }
  for (size_t k = 0; k < batches.size(); ++k) add_batch(out, "batch" + std::to_string(k) + "/", batches[k]);
  for (size_t k = 0; k < eval_set.size(); ++k) add_batch(out, "eval" + std::to_string(k) + "/", eval_set[k]);
  add_ints(out, "schedule", {int64_t(schedule.size())}, schedule);

  Tape<float> tape;
  std::map<std::string, std::string> meta = cfg.to_metadata();
  const auto evaluate = [&](const std::string& when) {
    for (int kmax : {0, o.kmax}) {
      AttentionEvalSums sums;
      int64_t correct = 0;
      for (const Batch& b : eval_set) {
        tape.reset();
        Ctx c{tape, model.ps, false, CounterRng(o.seed, stream_id("crosscheck/eval")), 0.f};
        sums.add(model.evaluate(c, b, kmax));
        correct += model.count_correct(c, b, kmax);
      }
      meta["eval/" + when + "/k" + std::to_string(kmax)] = eval_json(sums, correct);
    }
  };
  evaluate("init");

  const std::vector<float> loss = train_and_record(out, model.ps, tape, o, obj, [&](Ctx& c, int t) {
    const Batch& b = batches[size_t(schedule[size_t(t)])];
    return std::make_pair(model.objective(c, b, obj), b.B);
  });
  add_params(out, "trained/", model.ps, false);
  evaluate("trained");

  meta["crosscheck/batches"] = std::to_string(batches.size());
  meta["crosscheck/eval_batches"] = std::to_string(eval_set.size());
  meta["crosscheck/kmax"] = std::to_string(o.kmax);
  write_dump(cl, o, obj, out_path, out, meta, loss);
  return 0;
}

// The options of the dumped model, its data and its objective: each task's dump reads some of them
// (TaskCrosscheck::options); the others --help lists are every dump's (steps, batches, batch-size, lr, ...).
constexpr const char* kDumpModelOptions =
    "data attn score vocab answers regions features src-len tgt-len emb-size hidden-size layers attn-size inf-hidden "
    "latent-size samples temperature alpha kmax";

// A usage error for the first of kDumpModelOptions given (not left at its default) that the task's dump does not
// read: it would change nothing in the file.
void refuse_options_not_dumped(const CommandLine& cl, const TaskCommands& task) {
  for (const std::string& name : words_of(kDumpModelOptions))
    if (cl.has(name) && !has_word(task.crosscheck.options, name))
      cl.fail(fmt::format("--{} is not read by --task {} (its dump reads: {})", name, task.name,
                          dashed_options(words_of(task.crosscheck.options))));
}

// The runs of `task` that `make crosscheck` dumps (TaskCrosscheck::runs), one a line: "TASK-STEM --task TASK
// OPTIONS", each "{attn}" or "{sparse}" run repeated for every such cross-checked variant of the task.
std::string crosscheck_runs(const TaskCommands& task) {
  std::string out;
  for (const CrosscheckRun& run : task.crosscheck.runs) {
    const std::string stem = run.stem, options = run.options;
    const char* const placeholders[] = {"{attn}", "{sparse}"};
    const char* placeholder = nullptr;
    for (const char* p : placeholders)
      if (stem.find(p) != std::string::npos || options.find(p) != std::string::npos) placeholder = p;
    const auto line = [&](const std::string& attn) {
      std::string s = stem, o = options;
      if (placeholder) {
        for (size_t at; (at = s.find(placeholder)) != std::string::npos;) s.replace(at, std::strlen(placeholder), attn);
        for (size_t at; (at = o.find(placeholder)) != std::string::npos;) o.replace(at, std::strlen(placeholder), attn);
      }
      out += fmt::format("{}-{} --task {} {}\n", task.name, s, task.name, o);
    };
    if (!placeholder) {
      line("");
      continue;
    }
    for (AttnVariant v : attn_registry().for_task(task.name))
      if (variant_info(v).crosscheck && (placeholder == placeholders[0] || variant_info(v).sparse))
        line(variant_info(v).name);
  }
  return out;
}

}  // namespace lava::crosscheck

namespace lava {

using namespace crosscheck;

int cmd_crosscheck_dump(int argc, char** argv) {
  const std::vector<std::string> tasks = task_registry().crosschecked();
  std::string task_help;
  for (const std::string& t : tasks) task_help += (task_help.empty() ? "" : " | ") + t;
  CommandLine cl("crosscheck-dump", "lava crosscheck-dump --attn VARIANT --out FILE [options]",
                 "Writes what tools/torch_reference.py needs to recompute a small model independently: the initial\n"
                 "parameters, fixed random batches, LAVA's gradient at the first step, the noise of every step, the\n"
                 "loss of --steps Adam updates with dropout off, the trained parameters, and the evaluation sums\n"
                 "(exact and K-max) of the initial and trained model. `make crosscheck` runs it for every variant.");
  cl.options().add_options()                                                                            //
      ("task", po::value<std::string>()->default_value(tasks.front()), task_help.c_str())             //
      ("data", po::value<std::string>(), "train on this corpus's batches in lava train's order (test: eval)") //
      ("attn", po::value<std::string>()->default_value(variant_info(AttnVariant()).name),
       crosschecked_variants(tasks.front(), "|").c_str())  //
      ("list-tasks", po::bool_switch(), "print the tasks the cross-check covers, one a line, and stop")  //
      ("list-variants", po::bool_switch(), "print the cross-checked variants of --task, one a line, and stop")  //
      ("list-runs", po::bool_switch(),
       "print the dumps make crosscheck writes for --task, one a line: FILE-STEM OPTIONS, and stop")  //
      ("out", po::value<std::string>(), "the safetensors file to write")                                //
      ("steps", po::value<std::string>()->default_value("200"), "Adam updates")                        //
      ("batches", po::value<std::string>()->default_value("4"), "fixed batches, visited in turn")      //
      ("batch-size", po::value<std::string>()->default_value("3"), "sentence pairs per batch")         //
      ("src-len", po::value<std::string>()->default_value("6"), "longest source sentence")             //
      ("tgt-len", po::value<std::string>()->default_value("6"), "longest target sentence")             //
      ("vocab", po::value<std::string>()->default_value("12"), "source vocabulary (target: one more)") //
      ("emb-size", po::value<std::string>()->default_value("6"), "embedding size")                     //
      ("hidden-size", po::value<std::string>()->default_value("8"), "hidden size (even)")              //
      ("layers", po::value<std::string>()->default_value("2"), "LSTM layers")                          //
      ("attn-size", po::value<std::string>()->default_value("5"), "mlp scorer size")                   //
      ("inf-hidden", po::value<std::string>()->default_value("6"), "inference network size (even)")    //
      ("score", po::value<std::string>()->default_value("mlp"), "mlp | general | dot")                 //
      ("regions", po::value<std::string>()->default_value("4"), "vqa: regions per image")              //
      ("features", po::value<std::string>()->default_value("5"), "vqa: features per region")           //
      ("answers", po::value<std::string>()->default_value("7"), "vqa: answer vocabulary")              //
      ("latent-size", po::value<std::string>()->default_value("3"), "seqvae: latent size")             //
      ("samples", po::value<std::string>()->default_value("3"), "wake-sleep samples")                     //
      ("temperature", po::value<std::string>()->default_value("0.5"), "Gumbel-softmax temperature")        //
      ("kmax", po::value<std::string>()->default_value("2"), "the K of the K-max evaluation")          //
      ("alpha", po::value<std::string>()->default_value("2"), "sparse variants: 2 (sparsemax) | 1.5 (entmax)") //
      ("lr", po::value<std::string>()->default_value("3e-3"), "Adam learning rate")                    //
      ("clip", po::value<std::string>()->default_value("5"), "gradient clipping by global norm")       //
      ("init", po::value<std::string>()->default_value("0.5"), "initial parameters uniform in [-init, init]");
  if (!cl.parse(argc, argv)) return 0;
  const std::string task = cl.get_choice("task", tasks);
  if (cl.vm()["list-tasks"].as<bool>()) {
    for (const std::string& t : tasks) std::printf("%s\n", t.c_str());
    return 0;
  }
  if (cl.vm()["list-variants"].as<bool>()) {
    const std::string variants = crosschecked_variants(task, "\n");
    std::printf("%s", variants.empty() ? "" : (variants + "\n").c_str());
    return 0;
  }
  if (cl.vm()["list-runs"].as<bool>()) {
    std::printf("%s", crosscheck_runs(task_registry().find(task)).c_str());
    return 0;
  }
  refuse_options_not_dumped(cl, task_registry().find(task));
  apply_thread_count(cl.common().threads);
  if (!cl.has("out")) cl.fail("--out is required");
  CrosscheckOptions o;
  o.steps = int(cl.get_int("steps", 1, 1000000));
  o.batches = int(cl.get_int("batches", 1, 10000));
  o.batch_size = int(cl.get_int("batch-size", 1, 10000));
  o.src_len = int(cl.get_int("src-len", 1, 10000));
  o.tgt_len = int(cl.get_int("tgt-len", 1, 10000));
  o.kmax = int(cl.get_int("kmax", 1, 10000));
  o.lr = cl.get_double("lr", 0, 1);
  o.clip = cl.get_double("clip", 0, 1e9);
  o.init = cl.get_double("init", 0, 10);
  o.seed = cl.common().seed;
  return task_registry().find(task).crosscheck.dump(cl, o, cl.get_string("out"));
}

}  // namespace lava
