// lava train --task nmt: train an attention model on a parallel corpus, keeping the best checkpoint by validation.
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "models/nmt_trainer.hpp"
#include "report/json.hpp"

namespace lava {

int cmd_train(int argc, char** argv) {
  CommandLine cl("train", "lava train --task nmt --data DIR --attn VARIANT [--save MODEL] [options]",
                 "Trains an attention model. --task nmt reads DIR/{train,valid,test}.{SRC,TGT} (one sentence per line,\n"
                 "tokens separated by spaces) and keeps the checkpoint with the best validation bound.\n"
                 "Attention variants (--attn):\n" +
                     attn_variant_help() +
                     "Progress goes to stderr; with --format json, one JSON line per epoch and a summary on stdout.");
  cl.options().add_options()                                                                     //
      ("task", po::value<std::string>()->default_value("nmt"), "nmt")                            //
      ("data", po::value<std::string>(), "corpus directory")                                     //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")           //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")           //
      ("attn", po::value<std::string>()->default_value("soft"), attn_variant_list().c_str())     //
      ("score", po::value<std::string>()->default_value("mlp"), "prior scorer: mlp|general|dot")  //
      ("save", po::value<std::string>(), "write the best checkpoint here (safetensors)")         //
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
      ("samples", po::value<std::string>()->default_value("5"), "var-rws: samples from q")         //
      ("temperature", po::value<std::string>()->default_value("1"), "var-gumbel: relaxation temperature")  //
      ("max-len", po::value<std::string>()->default_value("50"), "skip train/valid pairs longer than this")  //
      ("min-freq", po::value<std::string>()->default_value("1"), "vocabulary: minimum count")    //
      ("max-vocab", po::value<std::string>()->default_value("0"), "vocabulary: at most this many words per side");
  if (!cl.parse(argc, argv)) return 0;
  cl.get_choice("task", {"nmt"});  // the only task so far; anything else is a usage error
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
  o.model.emb = int(cl.get_int("emb-size", 1, 65536));
  o.model.hidden = int(cl.get_int("hidden-size", 2, 65536));
  if (o.model.hidden % 2) cl.fail("--hidden-size must be even (two encoder directions)");
  o.model.attn_size = int(cl.get_int("attn-size", 1, 65536));
  o.model.inf_hidden = int(cl.get_int("inf-hidden", 2, 65536));
  if (o.model.inf_hidden % 2) cl.fail("--inf-hidden must be even (two directions)");
  o.model.layers = int(cl.get_int("layers", 1, 16));
  o.model.dropout = float(cl.get_double("dropout", 0, 0.95));
  o.objective.samples = int(cl.get_int("samples", 1, 1000));
  o.objective.temperature = float(cl.get_double("temperature", 1e-3, 1e3));
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
  o.seed = cl.common().seed;
  o.format = cl.common().format;

  const NmtTrainSummary s = train_nmt(o);
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
