// lava train --task nmt: train an attention model on a parallel corpus, keeping the best checkpoint by validation;
// stop on SIGINT/SIGTERM with a resume state, continue with --resume, draw pictures with --plot.
#include <cstdio>
#include <string_view>

#include "cli/command_line.hpp"
#include "cli/cmd_seqvae.hpp"
#include "cli/cmd_caption.hpp"
#include "cli/cmd_vqa.hpp"
#include "cli/commands.hpp"
#include "cli/loop_options.hpp"
#include "cli/option_table.hpp"
#include "cli/variant_options.hpp"
#include "core/stop_signal.hpp"
#include "tasks/nmt/trainer.hpp"
#include "core/json.hpp"

namespace lava {

namespace {

const OptionTable<Seq2SeqConfig>& nmt_model_table() {
  using C = Seq2SeqConfig;
  static const OptionTable<C> table = {
      {"emb-size", &C::emb, 1, 65536, "word embedding size"},
      {"hidden-size", &C::hidden, 2, 65536, "encoder memory and decoder state size (even: two directions)"},
      {"attn-size", &C::attn_size, 1, 65536, "MLP scorer hidden size"},
      {"inf-hidden", &C::inf_hidden, 2, 65536, "inference network BiLSTM size (even: two directions)"},
      {"layers", &C::layers, 1, 16, "LSTM layers (encoder and decoder)"},
      {"dropout", &C::dropout, 0, 0.95, "dropout probability"},
  };
  return table;
}

}  // namespace

int cmd_train(int argc, char** argv) {
  const std::string task = task_of(argc, argv, "nmt");
  if (task == "caption") return cmd_train_caption(argc, argv);
  if (task == "vqa") return cmd_train_vqa(argc, argv);
  if (task == "seqvae") return cmd_train_seqvae(argc, argv);
  CommandLine cl("train", "lava train --task nmt --data DIR --attn VARIANT [--save MODEL] [options]",
                 "Trains an attention model. --task nmt reads DIR/{train,valid,test}.{SRC,TGT} (one sentence per line,\n"
                 "tokens separated by spaces) and keeps the checkpoint with the best validation bound (log p for\n"
                 "the variants that train it, the ELBO otherwise; the Jensen bound for hard attention).\n"
                 "Attention variants (--attn):\n" +
                     attn_variant_help("nmt") +
                     "Progress goes to stderr; with --format json, one JSON line per epoch and a summary on stdout.\n\n" +
                     kResumeHelp + std::string("\n\n") +
                     "--plot DIR writes, after every epoch: DIR/learning-curves.svg (train -objective, valid -log p and\n"
                     "-ELBO per token), DIR/kl.svg (KL gap, KL(q||p)), and for the first 4 validation sentences\n"
                     "DIR/attention-K.svg (prior vs exact posterior) and, with q, DIR/attention-K-q.svg (q vs posterior).");
  cl.options().add_options()                                                                     //
      ("task", po::value<std::string>()->default_value("nmt"), "nmt | vqa | caption | seqvae (lava train --task vqa --help, ...)")  //
      ("data", po::value<std::string>(), "corpus directory")                                     //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")           //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")           //
      ("attn", po::value<std::string>()->default_value(variant_info(AttnVariant()).name),
       attn_variant_list("nmt").c_str())  //
      ("score", po::value<std::string>()->default_value("mlp"), "prior scorer: mlp|general|dot")  //
      ("encoder", po::value<std::string>()->default_value("bilstm"),
       "bilstm | embedding (x_i = tanh(W e(x_i) + b), no context: a diagnostic for alignment studies)")  //
      ("plot", po::value<std::string>(), "after each epoch write learning curves and attention heatmaps (SVG) here")  //
      ("max-len", po::value<std::string>()->default_value("50"), "skip train/valid pairs longer than this")  //
      ("min-freq", po::value<std::string>()->default_value("1"), "vocabulary: minimum count")    //
      ("max-vocab", po::value<std::string>()->default_value("0"), "vocabulary: at most this many words per side");
  add_option_table(cl.options(), nmt_model_table(), Seq2SeqConfig());
  add_loop_options(cl.options(), NmtTrainOptions().loop, "sentence pairs");
  add_variant_options(cl.options());
  if (!cl.parse(argc, argv)) return 0;
  cl.get_choice("task", {"nmt"});  // other tasks were handed over above; anything else is a usage error
  NmtTrainOptions o;
  o.corpus.dir = cl.get_string("data");
  o.corpus.src_lang = cl.get_string("src");
  o.corpus.tgt_lang = cl.get_string("tgt");
  o.corpus.max_len = int(cl.get_int("max-len", 1, 100000));
  o.src_vocab.min_freq = o.tgt_vocab.min_freq = cl.get_int("min-freq", 1, INT64_MAX);
  o.src_vocab.max_vocab = o.tgt_vocab.max_vocab = int(cl.get_int("max-vocab", 0, 10000000));
  try {
    o.model.attn = parse_attn_variant(cl.get_string("attn"), "nmt");
  } catch (const UsageError& e) {
    cl.fail(e.what());
  }
  o.model.score = cl.get_enum("score", kNmtScoreNames);
  o.model.encoder = cl.get_enum("encoder", kNmtEncoderNames);
  read_option_table(cl, nmt_model_table(), o.model);
  if (o.model.hidden % 2) cl.fail("--hidden-size must be even (two encoder directions)");
  if (o.model.inf_hidden % 2) cl.fail("--inf-hidden must be even (two directions)");
  read_variant_options(cl, o.model.variant, o.objective);
  read_loop_options(cl, o.loop);
  if (cl.has("plot")) o.plot_dir = cl.get_string("plot");

  const NmtTrainSummary s = train_nmt(o);
  if (s.stop_signal)
    return report_signal_stop(o.loop, {s.stop_signal, s.steps, s.stop_epoch, s.stop_batch, s.stop_batches, s.resume_state});
  if (o.loop.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "done").add("attn", variant_info(o.model.attn).name).add("steps", s.steps).add("epochs", s.epochs);
    j.add("best_epoch", s.best_epoch).add("stop", s.stop_reason).add("seconds", s.seconds).add("tokens_per_s", s.tokens_per_second).add("valid_ppl", s.best_valid.ppl);
    j.add("valid_elbo", s.best_valid.elbo).add("valid_kl_gap", s.best_valid.kl_gap).add("nan", s.stopped_on_nan);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("trained %s: %lld steps in %.1f s (%.0f target tokens/s), stopped by %s; best valid (epoch %.2f) ppl "
                "%.3f, elbo/tok %.4f\n",
                variant_info(o.model.attn).name, (long long)s.steps, s.seconds, s.tokens_per_second,
                s.stop_reason.c_str(), s.best_epoch, s.best_valid.ppl, s.best_valid.elbo);
  }
  return s.stopped_on_nan ? 1 : 0;
}

}  // namespace lava
