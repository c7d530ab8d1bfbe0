// lava train --task caption / lava eval --task caption: Show, Attend and Tell on the 3x3 scenes.
#include <cstdio>
#include <memory>

#include "cli/command_line.hpp"
#include "cli/loop_options.hpp"
#include "cli/option_table.hpp"
#include "cli/task_registry.hpp"
#include "cli/variant_options.hpp"
#include "core/json.hpp"
#include "report/table.hpp"
#include "tasks/caption/model_file.hpp"
#include "tasks/caption/plots.hpp"
#include "tasks/caption/trainer.hpp"
#include "tasks/caption/data.hpp"

namespace lava {

namespace {

constexpr const char* kModelHelp =
    "The model (Xu et al. 2015 on the 9 regions of a `lava data scenes` directory):\n"
    "annotations a_i = relu(W r_i + b); LSTM decoder with h_0, c_0 = tanh(MLP(mean_i a_i)); MLP attention\n"
    "alpha_t = softmax_i v' tanh(W_q h_{t-1} + W_k a_i) with the gate beta_t = sigmoid(w' h_{t-1} + b); the LSTM\n"
    "reads [E y_{t-1}; h_{t-1}; beta_t sum_i alpha_ti a_i] (the soft context for every variant, so a region drawn\n"
    "at word t changes that word only and log p(y|a) = sum_t log sum_i alpha_ti f(y_t|i) is exact); the deep\n"
    "output layer f(y_t|i) = softmax(L_o tanh(E y_{t-1} + L_h h_t + L_z a_i)); variants with q add\n"
    "q(z_t=i|a,y) from h_t, the word y_t and a_i. --alpha-reg L adds SAT's doubly stochastic penalty\n"
    "L sum_i (1 - sum_t alpha_ti)^2 per caption.\n"
    "SAT's stochastic hard attention (s_t ~ alpha_t) trains by REINFORCE with a moving-average baseline, weight\n"
    "--sat-reinforce, entropy bonus --sat-entropy, and with probability --sat-expected per sentence the expected\n"
    "context instead; the other variants as for translation.\n";

void add_data_options(CommandLine& cl) {
  cl.options().add_options()                                                      //
      ("data", po::value<std::string>(), "a `lava data scenes` directory")        //
      ("mnist", po::value<std::string>(), "Fashion-MNIST directory (default: the one in meta.tsv)");
}

std::unique_ptr<CommandLine> caption_train_command_line() {
  auto cl = std::make_unique<CommandLine>(
      "train", "lava train --task caption --data DIR --attn VARIANT [options]",
      std::string("Trains a Show, Attend and Tell captioner on the scenes' reference captions and keeps the\n"
                  "checkpoint with the best validation bound per word (log p for soft and marginal, the\n"
                  "Jensen bound for hard attention, the ELBO for variational attention).\n") +
          kModelHelp + "Attention variants (--attn):\n" + attn_variant_help("caption") +
          "Progress goes to stderr; with --format json, one JSON line per epoch and a summary on stdout.\n\n" +
          kResumeHelp);
  add_data_options(*cl);
  cl->options().add_options()                                                                  //
      ("alpha-reg", po::value<std::string>()->default_value("0"), "lambda of the doubly stochastic penalty")  //
      ("sat-reinforce", po::value<std::string>()->default_value("1"),
       "SAT hard attention: weight of the REINFORCE term")  //
      ("sat-entropy", po::value<std::string>()->default_value("0.01"), "SAT hard attention: entropy bonus lambda_e")  //
      ("sat-expected", po::value<std::string>()->default_value("0.5"),
       "SAT hard attention: probability per sentence of the expected context")  //
      ("sat-baseline-decay", po::value<std::string>()->default_value("0.9"),
       "SAT hard attention: b <- decay b + (1 - decay) mean log f of the sampled words")  //
      ("eval-batch-size", po::value<std::string>()->default_value("128"), "captions per validation batch");
  add_choice_table(cl->options(), caption_choice_options(), CaptionConfig());
  add_option_table(cl->options(), caption_model_options(), CaptionConfig());
  add_loop_options(cl->options(), CaptionTrainOptions().loop, "captions");
  add_variant_options(cl->options(), "caption");
  return cl;
}

int train_caption_command(const CommandLine& cl) {
  CaptionTrainOptions o;
  if (!cl.has("data")) cl.fail("--data DIR (a `lava data scenes` directory) is required");
  o.data_dir = cl.get_string("data");
  if (cl.has("mnist")) o.mnist_dir = cl.get_string("mnist");
  read_choice_table(cl, caption_choice_options(), o.model);
  read_option_table(cl, caption_model_options(), o.model);
  VariantConfig unused;  // no captioning variant reads one (read_variant_options refuses them)
  read_variant_options(cl, o.model.attn, unused, o.objective.objective);
  o.objective.alpha_reg = float(cl.get_double("alpha-reg", 0, 1e6));
  o.objective.sat.reinforce = float(cl.get_double("sat-reinforce", 0, 1e6));
  o.objective.sat.entropy = float(cl.get_double("sat-entropy", 0, 1e6));
  o.objective.sat.p_expected = float(cl.get_double("sat-expected", 0, 1));
  o.objective.sat.baseline_decay = float(cl.get_double("sat-baseline-decay", 0, 1));
  refuse_unread_options(cl, o.model.attn, {"sat-reinforce", "sat-entropy", "sat-expected", "sat-baseline-decay"});
  o.eval_batch_size = int(cl.get_int("eval-batch-size", 1, 100000));
  read_loop_options(cl, o.loop);

  return print_train_result(o.loop, train_caption(o));
}

std::unique_ptr<CommandLine> caption_eval_command_line() {
  auto cl = std::make_unique<CommandLine>(
      "eval", "lava eval --task caption --model MODEL --data DIR [--split test] [options]",
      "Evaluates a captioner on a split's reference captions, per word (</s> included): nll of the exact\n"
      "likelihood log p(y|a) = sum_t log sum_i alpha_ti f(y_t|i), enumerated over the 9 regions (direct\n"
      "for soft), bound = minus the training bound per word (Jensen for hard attention, ELBO for\n"
      "variational attention, = nll for soft and marginal), kl = KL(q||alpha), attn_acc = the share of\n"
      "item words whose attention argmax is the item's region (teacher-forced; chance 1/9), and\n"
      "BLEU-1..4 of the beam-decoded caption of each scene against all its references (multi-reference\n"
      "BLEU).\n"
      "--show N prints the first N decoded captions with each word's attended region (the argmax of alpha).\n"
      "--plot DIR writes DIR/scene-K-ATTN.svg: scene K once per decoded word, its regions tinted by alpha_t.\n");
  add_data_options(*cl);
  cl->options().add_options()                                                                     //
      ("model", po::value<std::string>(), "checkpoint written by lava train --task caption --save")  //
      ("split", po::value<std::string>()->default_value("test"), "train|valid|test")                //
      ("batch-size", po::value<std::string>()->default_value("128"), "captions per batch")          //
      ("beam", po::value<std::string>()->default_value("5"), "beam size (1 = greedy, 0 = no decoding)")  //
      ("limit", po::value<std::string>()->default_value("0"), "only the first N scenes (0 = all)")  //
      ("show", po::value<std::string>()->default_value("0"), "print the first N decoded captions")  //
      ("plot", po::value<std::string>(), "write attention pictures of the first scenes' decoded captions into DIR")  //
      ("plot-scenes", po::value<std::string>()->default_value("4"), "how many scenes to picture");
  return cl;
}

int eval_caption_command(const CommandLine& cl) {
  if (!cl.has("data") || !cl.has("model")) cl.fail("--model MODEL and --data DIR are required");
  const std::string split_name = cl.get_choice("split", {"train", "valid", "test"});
  CaptionEvalOptions eo;
  eo.batch_size = int(cl.get_int("batch-size", 1, 100000));
  eo.beam.beam = int(cl.get_int("beam", 0, 100));
  eo.decode = eo.beam.beam > 0;
  eo.limit = int(cl.get_int("limit", 0, 1 << 30));
  const int show = int(cl.get_int("show", 0, 1 << 30));
  const int plot_scenes = int(cl.get_int("plot-scenes", 0, 1000));
  if (cl.has("plot") && !eo.decode) cl.fail("--plot needs decoding (--beam >= 1)");
  LoadedCaptionModel m = load_caption_model(cl.get_string("model"));
  const CaptionSplit split =
      load_caption_split(cl.get_string("data"), split_name, cl.has("mnist") ? cl.get_string("mnist") : "");
  if (split.scenes->dim() != m.model->config().feature_dim)
    throw input_error(split.captions_path, 0,
                      fmt::format("scenes have {} features per region, the model {}", split.scenes->dim(),
                                  m.model->config().feature_dim));
  std::vector<DecodedCaption> decoded;
  const CaptionEvalFigures f = evaluate_caption(*m.model, split, m.vocab, eo, &decoded);
  for (int s = 0; s < std::min(show, int(decoded.size())); ++s) {
    std::string line;
    for (size_t k = 0; k < decoded[size_t(s)].tokens.size(); ++k)
      line += fmt::format("{}{}[{}]", k ? " " : "", m.vocab.token(decoded[size_t(s)].tokens[k]),
                          decoded[size_t(s)].region[k]);
    std::fprintf(stderr, "scene %d: %s\n", s, line.c_str());
  }
  const CaptionConfig& cfg = m.model->config();
  if (cl.has("plot"))
    write_caption_attention_plots(cl.get_string("plot"), split, m.vocab, decoded, cfg.attn_name(), plot_scenes);
  Table t;
  t.add_column("task").add_column("attn").add_column("split").add_column("captions").add_column("words");
  t.add_column("nll", ".4f").add_column("bound", ".4f").add_column("kl", ".4f").add_column("item_words");
  t.add_column("attn_acc", ".4f").add_column("scenes_decoded");
  for (int n = 1; n <= 4; ++n) t.add_column(fmt::format("bleu{}", n), ".2f");
  t.add_column("likelihood");
  t.add_row({"caption", cfg.attn_name(), split_name, f.captions, f.words, f.nll, f.bound, f.kl, f.item_words, f.attn_acc,
             f.scenes_decoded, f.bleu[0], f.bleu[1], f.bleu[2], f.bleu[3], likelihood_kind(cfg.attn)});
  t.print(stdout, cl.common().format);
  return 0;
}

}  // namespace

// lava eval's scenes of the split: each is decoded once and its reference captions scored.
int64_t caption_eval_examples(const CommandLine& cl) {
  if (!cl.has("data")) cl.fail("--data is required");
  return int64_t(load_caption_split(cl.get_string("data"), cl.get_choice("split", {"train", "valid", "test"}),
                                    cl.has("mnist") ? cl.get_string("mnist") : "")
                     .captions.size());
}

TaskCommands caption_commands() {
  return {"caption", caption_train_command_line, train_caption_command, caption_eval_command_line,
          eval_caption_command, caption_eval_examples};
}

}  // namespace lava
