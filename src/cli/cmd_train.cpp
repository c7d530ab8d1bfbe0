// lava train --task nmt: train an attention model on a parallel corpus, keeping the best checkpoint by validation;
// stop on SIGINT/SIGTERM with a resume state, continue with --resume, draw pictures with --plot.
#include <cstdio>
#include <string_view>

#include "cli/command_line.hpp"
#include "cli/cmd_seqvae.hpp"
#include "cli/cmd_vqa.hpp"
#include "cli/commands.hpp"
#include "cli/variant_options.hpp"
#include "core/stop_signal.hpp"
#include "tasks/nmt/trainer.hpp"
#include "tasks/nmt/train_state.hpp"
#include "core/json.hpp"

namespace lava {

int cmd_train(int argc, char** argv) {
  const std::string task = task_of(argc, argv, "nmt");
  if (task == "vqa") return cmd_train_vqa(argc, argv);
  if (task == "seqvae") return cmd_train_seqvae(argc, argv);
  CommandLine cl("train", "lava train --task nmt --data DIR --attn VARIANT [--save MODEL] [options]",
                 "Trains an attention model. --task nmt reads DIR/{train,valid,test}.{SRC,TGT} (one sentence per line,\n"
                 "tokens separated by spaces) and keeps the checkpoint with the best validation bound (log p for\n"
                 "none/soft/marginal/structured/sigmoid, the ELBO otherwise; the Jensen bound for hard-*).\n"
                 "Attention variants (--attn):\n" +
                     attn_variant_help() +
                     "Progress goes to stderr; with --format json, one JSON line per epoch and a summary on stdout.\n\n"
                     "Stopping and resuming: with --save MODEL the state of the run (parameters, Adam's moments,\n"
                     "counters) goes to MODEL.resume at every epoch end, every --checkpoint-every updates, when\n"
                     "--max-steps/--max-minutes stop the run, and on SIGINT or SIGTERM, which finish the update in\n"
                     "progress, save, and exit with 130 or 143 (a second signal stops at once, but never while a file\n"
                     "is being written). The same command plus --resume MODEL.resume continues the run exactly as if it\n"
                     "had never stopped (same parameters and figures, bit for bit); --epochs, --max-steps,\n"
                     "--max-minutes (training time over all sessions), --patience, --checkpoint-every, --plot, --format\n"
                     "and --threads may change, every other training option must be the same. A run that\n"
                     "--max-steps/--max-minutes stops inside an epoch validates the model it stopped with (a \"partial\"\n"
                     "epoch line) and keeps it if it is the best.\n\n"
                     "--plot DIR writes, after every epoch: DIR/learning-curves.svg (train -objective, valid -log p and\n"
                     "-ELBO per token), DIR/kl.svg (KL gap, KL(q||p)), and for the first 4 validation sentences\n"
                     "DIR/attention-K.svg (prior vs exact posterior) and, with q, DIR/attention-K-q.svg (q vs posterior).");
  cl.options().add_options()                                                                     //
      ("task", po::value<std::string>()->default_value("nmt"), "nmt | vqa | seqvae (lava train --task vqa --help, ...)")  //
      ("data", po::value<std::string>(), "corpus directory")                                     //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")           //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")           //
      ("attn", po::value<std::string>()->default_value("soft"), attn_variant_list().c_str())     //
      ("score", po::value<std::string>()->default_value("mlp"), "prior scorer: mlp|general|dot")  //
      ("encoder", po::value<std::string>()->default_value("bilstm"),
       "bilstm | embedding (x_i = tanh(W e(x_i) + b), no context: a diagnostic for alignment studies)")  //
      ("save", po::value<std::string>(), "write the best checkpoint here (safetensors), the resume state to MODEL.resume")  //
      ("resume", po::value<std::string>(), "continue the run saved in this resume state (--save defaults to it minus .resume)")  //
      ("checkpoint-every", po::value<std::string>()->default_value("0"),
       "also write the resume state every N updates (0 = at epoch ends, stops and signals only)")  //
      ("plot", po::value<std::string>(), "after each epoch write learning curves and attention heatmaps (SVG) here")  //
      ("epochs", po::value<std::string>()->default_value("10"), "passes over the training set")  //
      ("max-steps", po::value<std::string>()->default_value("0"), "stop after this many updates (0 = no limit)")  //
      ("max-minutes", po::value<std::string>()->default_value("0"), "stop after this much training time (0 = none)")  //
      ("batch-size", po::value<std::string>()->default_value("32"), "sentence pairs per batch")     //
      ("emb-size", po::value<std::string>()->default_value("128"), "word embedding size")         //
      ("hidden-size", po::value<std::string>()->default_value("256"), "encoder memory and decoder state size")  //
      ("attn-size", po::value<std::string>()->default_value("128"), "MLP scorer hidden size")    //
      ("inf-hidden", po::value<std::string>()->default_value("128"), "inference network BiLSTM size")  //
      ("layers", po::value<std::string>()->default_value("1"), "LSTM layers (encoder and decoder)")  //
      ("lr", po::value<std::string>()->default_value("1e-3"), "Adam learning rate")              //
      ("lr-decay", po::value<std::string>()->default_value("0.5"), "factor when validation stalls")  //
      ("start-decay-at", po::value<std::string>()->default_value("2"), "first epoch that may decay")  //
      ("patience", po::value<std::string>()->default_value("0"), "stop after N stalled epochs (0 = never)")  //
      ("clip", po::value<std::string>()->default_value("5"), "gradient clipping: max global norm")  //
      ("init", po::value<std::string>()->default_value("0.1"), "uniform init range [-a, a]")     //
      ("dropout", po::value<std::string>()->default_value("0.3"), "dropout probability")          //
      ("max-len", po::value<std::string>()->default_value("50"), "skip train/valid pairs longer than this")  //
      ("min-freq", po::value<std::string>()->default_value("1"), "vocabulary: minimum count")    //
      ("max-vocab", po::value<std::string>()->default_value("0"), "vocabulary: at most this many words per side");
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
    o.model.attn = parse_attn_variant(cl.get_string("attn"));
  } catch (const UsageError& e) {
    cl.fail(e.what());
  }
  o.model.score = cl.get_choice("score", {"mlp", "general", "dot"});
  o.model.encoder = cl.get_choice("encoder", {"bilstm", "embedding"});
  o.model.emb = int(cl.get_int("emb-size", 1, 65536));
  o.model.hidden = int(cl.get_int("hidden-size", 2, 65536));
  if (o.model.hidden % 2) cl.fail("--hidden-size must be even (two encoder directions)");
  o.model.attn_size = int(cl.get_int("attn-size", 1, 65536));
  o.model.inf_hidden = int(cl.get_int("inf-hidden", 2, 65536));
  if (o.model.inf_hidden % 2) cl.fail("--inf-hidden must be even (two directions)");
  o.model.layers = int(cl.get_int("layers", 1, 16));
  o.model.dropout = float(cl.get_double("dropout", 0, 0.95));
  read_variant_options(cl, o.model.variant, o.objective);
  o.epochs = int(cl.get_int("epochs", 1, 100000));
  o.max_steps = cl.get_int("max-steps", 0, INT64_MAX);
  o.max_minutes = cl.get_double("max-minutes", 0, 1e7);
  o.batch_size = int(cl.get_int("batch-size", 1, 100000));
  o.lr = cl.get_double("lr", 1e-12, 10);
  o.lr_decay = cl.get_double("lr-decay", 1e-6, 1);
  o.start_decay_at = int(cl.get_int("start-decay-at", 1, 100000));
  o.patience = int(cl.get_int("patience", 0, 100000));
  o.clip = cl.get_double("clip", 0, 1e9);
  o.init = cl.get_double("init", 0, 10);
  if (cl.has("save")) o.save = cl.get_string("save");
  if (cl.has("resume")) {
    o.resume = cl.get_string("resume");
    constexpr std::string_view kSuffix = ".resume";
    if (o.save.empty()) {
      if (o.resume.size() <= kSuffix.size() || !o.resume.ends_with(kSuffix))
        cl.fail("--resume " + o.resume + " does not end in .resume: name the best-model file with --save");
      o.save = o.resume.substr(0, o.resume.size() - kSuffix.size());
    }
  }
  o.checkpoint_every = cl.get_int("checkpoint-every", 0, INT64_MAX);
  if (o.checkpoint_every > 0 && o.save.empty()) cl.fail("--checkpoint-every needs --save (the state goes to MODEL.resume)");
  if (cl.has("plot")) o.plot_dir = cl.get_string("plot");
  o.seed = cl.common().seed;
  o.format = cl.common().format;

  const NmtTrainSummary s = train_nmt(o);
  if (s.stop_signal) {
    // The one line a stopped run leaves: where it stopped and how to go on.
    const std::string where = fmt::format("after step {} (epoch {}, {} of {} batches)", s.steps, s.stop_epoch,
                                          s.stop_batch, s.stop_batches);
    if (o.format == OutputFormat::json) {
      JsonLine j;
      j.add("event", "stopped").add("signal", signal_name(s.stop_signal)).add("steps", s.steps);
      j.add("epoch", s.stop_epoch).add("batch", s.stop_batch).add("resume_state", s.resume_state);
      std::printf("%s\n", j.str().c_str());
      std::fflush(stdout);
    }
    if (s.resume_state.empty())
      std::fprintf(stderr, "lava train: stopped by %s %s; nothing saved (no --save)\n",
                   signal_name(s.stop_signal).c_str(), where.c_str());
    else
      std::fprintf(stderr, "lava train: stopped by %s %s; state saved to %s: to continue, run the same command with "
                   "--resume %s\n", signal_name(s.stop_signal).c_str(), where.c_str(), s.resume_state.c_str(),
                   s.resume_state.c_str());
    return 128 + s.stop_signal;
  }
  if (o.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "done").add("attn", variant_info(o.model.attn).name).add("steps", s.steps).add("epochs", s.epochs);
    j.add("seconds", s.seconds).add("tokens_per_s", s.tokens_per_second).add("valid_ppl", s.best_valid.ppl);
    j.add("valid_elbo", s.best_valid.elbo).add("valid_kl_gap", s.best_valid.kl_gap).add("nan", s.stopped_on_nan);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("trained %s: %lld steps in %.1f s (%.0f target tokens/s); best valid ppl %.3f, elbo/tok %.4f\n",
                variant_info(o.model.attn).name, (long long)s.steps, s.seconds, s.tokens_per_second, s.best_valid.ppl,
                s.best_valid.elbo);
  }
  return s.stopped_on_nan ? 1 : 0;
}

}  // namespace lava
