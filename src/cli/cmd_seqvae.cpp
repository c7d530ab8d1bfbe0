// lava train --task seqvae / lava eval --task seqvae: the sequence VAE with an attention decoder, and posterior
// collapse (KL and active units) with and without attention, KL annealing and free bits.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command_line.hpp"
#include "cli/crosscheck_dump.hpp"
#include "cli/loop_options.hpp"
#include "cli/option_table.hpp"
#include "cli/task_registry.hpp"
#include "tasks/seqvae/model_file.hpp"
#include "tasks/seqvae/trainer.hpp"
#include "core/json.hpp"
#include "data/parallel_corpus.hpp"
#include "tasks/seqvae/eval.hpp"

namespace lava {

namespace {

constexpr const char* kModelHelp =
    "The model: an encoder over the sentence X (--encoder lstm: a bidirectional LSTM, summary = last forward and\n"
    "first backward state; transformer: a pre-norm self-attention encoder with sinusoidal positions, summary =\n"
    "the mean over positions) gives q(z|X) = N(mu, sigma^2) for one global z of --latent-size dimensions, prior\n"
    "N(0, I). The decoder LSTM reads [previous word; z] at every step and, with --dec-attn soft, attends to the\n"
    "encoder states of X (--score additive: v' tanh(W_q h + W_k m); multiplicative: h' W m); the word\n"
    "distribution is softmax(W_g tanh(W_h h + W_c context + b)). Soft attention lets the decoder copy X without\n"
    "z, which drives KL to 0 (posterior collapse); --kl-anneal and --free-bits counter it.\n";

constexpr const char* kFiguresHelp =
    "Figures (JSON keys): recon = log p(X|z) with z ~ q(z|X), kl = KL(q(z|X) || p(z)) in closed form, elbo =\n"
    "recon - kl, each in nats PER SENTENCE; elbo_per_token, recon_per_token, kl_per_token divide the sums by the\n"
    "predicted tokens (words + <eos>); ppl_bound = exp(-sum ELBO / tokens), an upper bound on perplexity; iw and\n"
    "ppl_iw: the importance-weighted bound log 1/K sum_k p(X,z_k)/q(z_k|X), K samples of z per sentence (eval\n"
    "--samples, train --valid-samples; iw >= elbo in expectation); active_units = dimensions d with Var over\n"
    "sentences of E_q[z_d|X] > --au-threshold (Burda et al. 2016), out of `latent`.\n";

void add_data_options(CommandLine& cl, const char* lang_default) {
  auto lang = po::value<std::string>();
  if (lang_default) lang->default_value(lang_default);
  cl.options().add_options()                                                          //
      ("data", po::value<std::string>(), "corpus directory: DIR/{train,valid,test}.LANG, one tokenised sentence a line")  //
      ("lang", lang, "the file suffix of the side to model (e.g. en of a de-en corpus)");
}

std::unique_ptr<CommandLine> seqvae_train_command_line() {
  const std::string description = fmt::format(
      "Trains a sequence VAE on one side of a corpus and keeps the checkpoint with the best\n"
      "validation ELBO.\n\n{}"
      "\nTraining maximises recon - beta * KL_term per sentence. --kl-anneal N raises beta linearly from\n"
      "0 to 1 over the first N updates (Bowman et al. 2016). --free-bits L replaces the KL by\n"
      "sum_d max(L, KL_d), KL_d the batch-average KL of dimension d, so a dimension's first L nats are\n"
      "free (Kingma et al. 2016). The reported elbo is always the true ELBO (beta = 1, no free bits).\n\n{}"
      "\nProgress goes to stderr; with --format json, one JSON line per validation (event \"epoch\"; the\n"
      "keys above plus train_loss, train_recon, train_kl per sentence, kl_weight, kl_per_dim) and a\n"
      "summary (event \"done\") on stdout.\n\n{}",
      kModelHelp, kFiguresHelp, kResumeHelp);
  auto cl = std::make_unique<CommandLine>(
      "train",
      "lava train --task seqvae --data DIR [--lang en] [--encoder lstm|transformer] [--dec-attn soft|none]\n"
      "       [--kl-anneal STEPS] [--free-bits LAMBDA] [--save MODEL] [options]",
      description);
  add_data_options(*cl, "en");
  cl->options().add_options()                                                                                     //
      ("kl-anneal", po::value<std::string>()->default_value("0"), "KL weight 0 -> 1 linearly over this many updates (0 = off)")  //
      ("free-bits", po::value<std::string>()->default_value("0"), "free nats per latent dimension (0 = off)")    //
      ("eval-batch-size", po::value<std::string>()->default_value("64"), "sentences per validation batch")        //
      ("valid-samples", po::value<std::string>()->default_value("1"), "samples of z per validation sentence")     //
      ("au-threshold", po::value<std::string>()->default_value("0.01"), "active unit: Var_X E[z_d|X] above this")  //
      ("max-len", po::value<std::string>()->default_value("50"), "skip train/valid sentences longer than this (0 = none)")  //
      ("min-freq", po::value<std::string>()->default_value("1"), "vocabulary: minimum count")                   //
      ("max-vocab", po::value<std::string>()->default_value("0"), "vocabulary: at most this many words (0 = all)");
  add_choice_table(cl->options(), seqvae_choice_options(), SeqVaeConfig());
  add_option_table(cl->options(), seqvae_model_options(), SeqVaeConfig());
  add_loop_options(cl->options(), SeqVaeTrainOptions().loop, "sentences");
  return cl;
}

int train_seqvae_command(const CommandLine& cl) {
  SeqVaeTrainOptions o;
  o.data.dir = cl.get_string("data");
  o.data.lang = cl.get_string("lang");
  o.data.max_len = int(cl.get_int("max-len", 0, 100000));
  o.vocab.min_freq = cl.get_int("min-freq", 1, INT64_MAX);
  o.vocab.max_vocab = int(cl.get_int("max-vocab", 0, 10000000));
  SeqVaeConfig& m = o.model;
  read_choice_table(cl, seqvae_choice_options(), m);
  read_option_table(cl, seqvae_model_options(), m);
  if (m.hidden % 2) cl.fail("--hidden-size must be even (two encoder directions)");
  if (m.encoder == SeqVaeEncoder::transformer && m.hidden % m.heads)
    cl.fail(fmt::format("--hidden-size {} is not divisible by --heads {}", m.hidden, m.heads));
  o.kl_anneal = cl.get_int("kl-anneal", 0, INT64_MAX);
  o.free_bits = cl.get_double("free-bits", 0, 1e6);
  o.eval.batch_size = int(cl.get_int("eval-batch-size", 1, 100000));
  o.eval.samples = int(cl.get_int("valid-samples", 1, 10000));
  o.eval.au_threshold = cl.get_double("au-threshold", 0, 1e9);
  read_loop_options(cl, o.loop);

  return print_train_result(o.loop, train_seqvae(o));
}

std::unique_ptr<CommandLine> seqvae_eval_command_line() {
  auto cl = std::make_unique<CommandLine>(
      "eval", "lava eval --task seqvae --model MODEL --data DIR [--split test] [--samples K] [options]",
      std::string("Evaluates a sequence VAE on DIR/SPLIT.LANG (LANG defaults to the one the model was\n"
                  "trained on) with the model's vocabulary.\n\n") +
          kModelHelp + "\n" + kFiguresHelp +
          "\nOne result row (table, or with --format json one object with event \"eval\"); with --dims,\n"
          "one row per latent dimension first (event \"dim\": kl, mu_variance, active).");
  add_data_options(*cl, nullptr);
  cl->options().add_options()                                                                     //
      ("model", po::value<std::string>(), "checkpoint written by lava train --task seqvae --save")  //
      ("split", po::value<std::string>()->default_value("test"), "train | valid | test")           //
      ("samples", po::value<std::string>()->default_value("10"), "samples of z per sentence (recon is their mean)")  //
      ("batch-size", po::value<std::string>()->default_value("64"), "sentences per batch")          //
      ("limit", po::value<std::string>()->default_value("0"), "only the first N sentences (0 = all)")  //
      ("au-threshold", po::value<std::string>()->default_value("0.01"), "active unit: Var_X E[z_d|X] above this")  //
      ("dims", po::bool_switch(), "also print the per-dimension KL and Var_X E[z_d|X]");
  return cl;
}

int eval_seqvae_command(const CommandLine& cl) {
  const std::string split_name = cl.get_choice("split", {"train", "valid", "test"});
  SeqVaeEvalOptions eo;
  eo.samples = int(cl.get_int("samples", 1, 10000));
  eo.batch_size = int(cl.get_int("batch-size", 1, 100000));
  eo.limit = cl.get_int("limit", 0, INT64_MAX);
  eo.au_threshold = cl.get_double("au-threshold", 0, 1e9);
  eo.seed = cl.common().seed;
  const std::string data_dir = cl.get_string("data");
  const std::string model_path = cl.get_string("model");
  LoadedSeqVae m = load_seqvae(model_path);
  SeqVaeDataOptions d;
  d.dir = data_dir;
  d.lang = cl.has("lang") ? cl.get_string("lang") : m.lang;
  if (d.lang.empty()) cl.fail("the model names no language: give --lang");
  d.max_len = 0;  // evaluation never skips long sentences
  const CorpusSplit split = corpus_split(split_name);
  const ParallelSplit data = read_parallel_split(seqvae_corpus_options(d), split, m.vocab, m.vocab);
  const SeqVaeEvalFigures f = evaluate_seqvae(*m.model, data, eo);
  const SeqVaeConfig& cfg = m.model->config();
  const OutputFormat format = cl.common().format;
  if (cl.vm()["dims"].as<bool>()) {
    Table dims;
    dims.add_column("event").add_column("task").add_column("dim").add_column("kl", ".4f").add_column("mu_variance", ".4g");
    dims.add_column("active");
    for (int k = 0; k < f.latent; ++k)
      dims.add_row({"dim", "seqvae", k, f.kl_per_dim[size_t(k)], f.mu_variance[size_t(k)],
                    f.mu_variance[size_t(k)] > eo.au_threshold ? 1 : 0});
    dims.print(stdout, format);
    if (format == OutputFormat::table) std::printf("\n");
  }
  Table t;
  t.add_column("event").add_column("task").add_column("encoder").add_column("dec_attn").add_column("split").add_column("sentences");
  t.add_column("tokens").add_column("samples").add_column("elbo", ".3f").add_column("recon", ".3f");
  t.add_column("kl", ".3f").add_column("elbo_per_token", ".4f").add_column("recon_per_token", ".4f");
  t.add_column("kl_per_token", ".4f").add_column("ppl_bound", ".2f").add_column("iw", ".3f");
  t.add_column("ppl_iw", ".2f").add_column("active_units").add_column("latent");
  t.add_row({"eval", "seqvae", enum_name(kSeqVaeEncoderNames, cfg.encoder), enum_name(kDecoderAttentionNames, cfg.dec_attn), split_name, f.sentences, f.tokens, f.samples, f.elbo, f.recon, f.kl,
             f.elbo_per_token, f.recon_per_token, f.kl_per_token, f.ppl_bound, f.iw, f.ppl_iw, f.active_units,
             f.latent});
  t.print(stdout, format);
  return 0;
}

}  // namespace

// lava eval's sentences of SPLIT.LANG with tokens (LANG: --lang, else the model's), never length-filtered.
int64_t seqvae_eval_examples(const CommandLine& cl) {
  if (!cl.has("data")) cl.fail("--data is required");
  SeqVaeDataOptions d;
  d.dir = cl.get_string("data");
  if (cl.has("lang")) d.lang = cl.get_string("lang");
  else if (cl.has("model")) d.lang = load_seqvae(cl.get_string("model")).lang;
  if (d.lang.empty()) cl.fail("the model names no language: give --lang");
  d.max_len = 0;
  return count_parallel_split(seqvae_corpus_options(d), corpus_split(cl.get_choice("split", {"train", "valid", "test"}))).pairs;
}

TaskCommands seqvae_commands() {
  // Soft attention in the decoder, with one and two LSTM layers.
  return {"seqvae", seqvae_train_command_line, train_seqvae_command, seqvae_eval_command_line, eval_seqvae_command,
          seqvae_eval_examples,
          {crosscheck::dump_seqvae, {{"1", "--layers 1"}, {"2", "--layers 2"}},
           "vocab src-len emb-size hidden-size layers attn-size latent-size"}};
}

}  // namespace lava
