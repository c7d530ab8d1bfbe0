// lava train --task vqa / lava eval --task vqa: the VQA-style experiment (paper §3, Table 1's VQA columns).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/command_line.hpp"
#include "cli/crosscheck_dump.hpp"
#include "cli/loop_options.hpp"
#include "cli/option_table.hpp"
#include "cli/task_registry.hpp"
#include "cli/variant_options.hpp"
#include "attention/collapse_monitor.hpp"
#include "tasks/vqa/model_file.hpp"
#include "tasks/vqa/plots.hpp"
#include "tasks/vqa/trainer.hpp"
#include "core/json.hpp"
#include "tasks/vqa/data.hpp"

namespace lava {

namespace {

constexpr const char* kDataHelp =
    "Data: either --data DIR, a directory made by `lava data scenes` (split S reads DIR/S.questions.tsv, region\n"
    "features are computed from the Fashion-MNIST images), or your own --features F.npy --questions Q: a float32\n"
    ".npy of shape (images, regions, dim) and questions TSVs (image, question, answer[, answer counts[, type[,\n"
    "regions]]]; see the README). Q is a directory holding train.questions.tsv, valid.questions.tsv and\n"
    "test.questions.tsv, or a path containing {split} (e.g. q/{split}.tsv). F may contain {split} too, for one\n"
    "features file per split; without it every split indexes the same file.\n";

void add_data_options(CommandLine& cl) {
  cl.options().add_options()                                                                            //
      ("data", po::value<std::string>(), "a `lava data scenes` directory")                              //
      ("features", po::value<std::string>(), "user data: region features .npy (may contain {split})")   //
      ("questions", po::value<std::string>(), "user data: questions directory, or a path with {split}")  //
      ("mnist", po::value<std::string>(), "scenes: Fashion-MNIST directory (default: the one in meta.tsv)");
}

VqaDataOptions data_options(const CommandLine& cl) {
  VqaDataOptions d;
  if (cl.has("data")) d.data_dir = cl.get_string("data");
  if (cl.has("features")) d.features = cl.get_string("features");
  if (cl.has("questions")) d.questions = cl.get_string("questions");
  if (cl.has("mnist")) d.mnist_dir = cl.get_string("mnist");
  if (d.data_dir.empty() == (d.features.empty() && d.questions.empty()))
    cl.fail("give either --data DIR or --features FILE.npy --questions Q");
  if (d.data_dir.empty() && (d.features.empty() || d.questions.empty()))
    cl.fail("user data needs both --features and --questions");
  return d;
}

std::string plot_dir(const CommandLine& cl) {
  if (!cl.has("plot")) return "";
  const std::string dir = cl.get_string("plot");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw input_error(dir, 0, "cannot create the plot directory: " + ec.message());
  return dir;
}

std::unique_ptr<CommandLine> vqa_train_command_line() {
  auto cl = std::make_unique<CommandLine>(
      "train", "lava train --task vqa (--data DIR | --features F --questions Q) --attn VARIANT [options]",
      std::string("Trains the VQA model: a question LSTM gives x̃, each region's features a learned\n"
                  "projection x_i; prior p(z=i) ∝ exp(wᵀ tanh(W1 x_i + W2 x̃)); answer distribution\n"
                  "f(x, z=i) = softmax(MLP([x_i; x̃])); variants with q add q(z | x, x̃, answer).\n"
                  "Keeps the checkpoint with the best validation bound (log p for soft/none/marginal,\n"
                  "the ELBO otherwise; the Jensen bound for hard attention).\n"
                  "The default --init 0.3 (translation: 0.1) matters: the prior's additive scorer only lets\n"
                  "the question change which region wins through tanh's curvature, and at 0.1 its inputs sit\n"
                  "in tanh's linear range, so the prior stays uniform for epochs.\n") +
          kDataHelp + "Attention variants (--attn):\n" + attn_variant_help("vqa") +
          "Progress goes to stderr; with --format json, one JSON line per epoch and a summary on stdout.\n\n" +
          kResumeHelp);
  add_data_options(*cl);
  cl->options().add_options()                                                                              //
      ("plot", po::value<std::string>(), "write learning curves and attention pictures (SVG) into DIR")   //
      ("plot-questions", po::value<std::string>()->default_value("6"), "validation questions to picture")  //
      ("eval-batch-size", po::value<std::string>()->default_value("256"), "questions per validation batch");
  add_choice_table(cl->options(), vqa_choice_options(), VqaConfig());
  add_option_table(cl->options(), vqa_model_options(), VqaConfig());
  add_loop_options(cl->options(), VqaTrainOptions().loop, "questions");
  add_variant_options(cl->options(), "vqa");
  return cl;
}

int train_vqa_command(const CommandLine& cl) {
  VqaTrainOptions o;
  o.data = data_options(cl);
  read_choice_table(cl, vqa_choice_options(), o.model);
  read_option_table(cl, vqa_model_options(), o.model);
  read_variant_options(cl, o.model.attn, o.model.variant, o.objective);
  o.eval_batch_size = int(cl.get_int("eval-batch-size", 1, 100000));
  o.plot_questions = int(cl.get_int("plot-questions", 0, 1000));
  read_loop_options(cl, o.loop);
  o.plot_dir = plot_dir(cl);

  return print_train_result(o.loop, train_vqa(o));
}

std::unique_ptr<CommandLine> vqa_eval_command_line() {
  auto cl = std::make_unique<CommandLine>(
      "eval", "lava eval --task vqa --model MODEL (--data DIR | --features F --questions Q) [options]",
      std::string(
          "Evaluates a VQA model per question: nll of the exact marginal p(y|x) = sum_i p(z=i) f_i(y)\n"
          "under the prior (direct for soft/none), accuracy of its argmax, the VQA score\n"
          "min(#annotators who gave the answer / 3, 1) where answer counts are given, elbo,\n"
          "kl = KL(q||p), kl_gap = log p - ELBO, kl_posterior = KL(q || exact posterior) computed\n"
          "directly (it must equal kl_gap), identity_error (the largest per-question difference), the\n"
          "prior's entropy, and, over questions with one annotated region, the share whose prior /\n"
          "posterior / q argmax is that region (chance: 1 / regions). Variants without q report the ELBO\n"
          "at q = p. Answers unseen in training have no likelihood: they are counted in `unseen`, left\n"
          "out of the likelihood figures and count as wrong. Rows with event \"qtype\" give the figures per\n"
          "question type, with subset single_region when every question of the type has exactly one\n"
          "annotated region (the answer is one region's: what_at, where, the relations, is_at) and\n"
          "multi_region otherwise (how_many, is_there); the row with event \"subset\" sums the\n"
          "single-region types (qtype lists them); the last row (no \"event\" key, as in translation)\n"
          "the totals over all questions.\n"
          "likelihood: exact | direct | sampled; the sampled variants (continuous latents)\n"
          "report an importance-weighted estimate with --eval-samples draws from q, null kl_posterior,\n"
          "and nll_mean_attn (at the mean attention, which accuracy uses).\n") +
          kDataHelp);
  add_data_options(*cl);
  cl->options().add_options()                                                                //
      ("model", po::value<std::string>(), "checkpoint written by lava train --task vqa --save")  //
      ("split", po::value<std::string>()->default_value("test"), "train|valid|test")           //
      ("batch-size", po::value<std::string>()->default_value("256"), "questions per batch")    //
      ("limit", po::value<std::string>()->default_value("0"), "only the first N questions (0 = all)")  //
      ("plot", po::value<std::string>(), "write attention pictures (SVG) of the first questions into DIR")  //
      ("plot-questions", po::value<std::string>()->default_value("6"), "how many questions to picture")  //
      ("eval-samples", po::value<std::string>(),
       "sampled variants: samples per question of the importance-weighted likelihood");
  return cl;
}

int eval_vqa_command(const CommandLine& cl) {
  const VqaDataOptions data = data_options(cl);
  const std::string split_name = cl.get_choice("split", {"train", "valid", "test"});
  const int batch_size = int(cl.get_int("batch-size", 1, 100000));
  const int64_t limit = cl.get_int("limit", 0, INT64_MAX);
  const int plot_questions = int(cl.get_int("plot-questions", 0, 1000));
  LoadedVqa m = load_vqa(cl.get_string("model"));
  if (cl.has("eval-samples")) {
    const int k = int(cl.get_int("eval-samples", 1, 100000));
    refuse_unread_options(cl, m.model->config().attn, {"eval-samples"}, "the model's --attn");
    m.model->set_eval_samples(k);
  }
  const VqaSplit split = load_vqa_split(data, split_name);
  check_vqa_features(m.model->config(), split);
  const VqaEncoded encoded = encode_vqa(split.questions, m.words, m.answers);
  const VqaEvalFigures f = evaluate_vqa(*m.model, split, encoded, m.answers, batch_size, limit, cl.common().seed);
  const std::string dir = plot_dir(cl);
  const char* attn = variant_info(m.model->config().attn).name;
  if (!dir.empty())
    write_vqa_attention_plots(dir, *m.model, split, encoded, m.answers, plot_questions, cl.get_string("model"));

  // One row per question type, then the single-region subset (the types all of whose questions have exactly one
  // annotated region; eval.hpp), then the totals. "subset" names the subset each row belongs to.
  Table types;
  types.add_column("event").add_column("task").add_column("attn").add_column("split").add_column("subset").add_column("qtype");
  types.add_column("questions").add_column("unseen").add_column("nll", ".4f").add_column("accuracy", ".4f");
  types.add_column("elbo", ".4f").add_column("kl", ".4f").add_column("kl_gap", ".5f").add_column("entropy", ".3f");
  types.add_column("q_entropy", ".3f").add_column("region_acc_posterior", ".4f");
  auto type_row = [&](const char* event, const std::string& subset, const std::string& qtype, const VqaFigures& g) {
    types.add_row({event, "vqa", attn, split_name, subset, qtype, g.questions, g.unseen, g.nll, g.accuracy, g.elbo, g.kl,
                   g.kl_gap, g.entropy, g.q_entropy, g.region_acc_posterior});
  };
  // Collapse confined to some question types is invisible in the totals (and to lava train's monitor, which
  // averages over all questions): one warning per collapsed type.
  auto warn_collapsed = [](const std::string& what, const VqaFigures& g) {
    if (!g.q_collapsed()) return;
    CollapseVerdict v;
    v.kl = g.kl, v.q_entropy = g.q_entropy, v.prior_entropy = g.entropy;
    std::fprintf(stderr, "lava eval: warning: %s: %s\n", what.c_str(), collapse_text(v, "question").c_str());
  };
  for (const VqaEvalFigures::PerType& t : f.per_type) {
    type_row("qtype", t.single_region ? "single_region" : "multi_region", t.qtype, t.figures);
    warn_collapsed(fmt::format("the {:.0f} '{}' questions", t.figures.questions, t.qtype), t.figures);
  }
  warn_collapsed(fmt::format("all {:.0f} questions", f.questions), f);
  type_row("subset", "single_region", f.single_region_types.empty() ? "-" : join_fields(f.single_region_types, "+"),
           f.single_region);
  types.print(stdout, cl.common().format);
  if (cl.common().format == OutputFormat::table) std::printf("\n");
  Table t;
  t.add_column("task").add_column("attn").add_column("split").add_column("questions").add_column("unseen");
  t.add_column("nll", ".4f").add_column("accuracy", ".4f").add_column("vqa_score", ".4f").add_column("elbo", ".4f");
  t.add_column("kl", ".4f").add_column("kl_gap", ".5f").add_column("kl_posterior", ".5f");
  t.add_column("identity_error", ".1e").add_column("entropy", ".3f").add_column("q_entropy", ".3f");
  t.add_column("region_questions");
  t.add_column("region_acc_prior", ".4f").add_column("region_acc_posterior", ".4f").add_column("region_acc_q", ".4f");
  t.add_column("likelihood");
  std::vector<Cell> row{"vqa", attn, split_name, f.questions, f.unseen, f.nll, f.accuracy, f.vqa_score, f.elbo, f.kl, f.kl_gap,
                        f.kl_posterior, f.identity_error, f.entropy, f.q_entropy, f.region_questions,
                        f.region_acc_prior, f.region_acc_posterior, f.region_acc_q,
                        likelihood_kind(m.model->config().attn)};
  if (variant_info(m.model->config().attn).sampled) {
    t.add_column("nll_mean_attn", ".4f").add_column("eval_samples");
    row.emplace_back(f.nll_mean_attn);
    row.emplace_back(double(m.model->config().variant.eval_samples));
  }
  if (variant_info(m.model->config().attn).sparse) {
    t.add_column("support", ".3f");
    row.emplace_back(f.support);
  }
  t.add_row(row);
  t.print(stdout, cl.common().format);
  return 0;
}

}  // namespace

// lava eval's questions of the split (load_vqa_split refuses a mix of --data and --features/--questions).
int64_t vqa_eval_examples(const CommandLine& cl) {
  VqaDataOptions d;
  for (const auto& [name, field] : {std::pair{"data", &d.data_dir}, std::pair{"features", &d.features},
                                    std::pair{"questions", &d.questions}, std::pair{"mnist", &d.mnist_dir}})
    if (cl.has(name)) *field = cl.get_string(name);
  if (d.data_dir.empty() == (d.features.empty() && d.questions.empty()))
    cl.fail("give either --data DIR or --features FILE.npy --questions Q");
  return int64_t(load_vqa_split(d, cl.get_choice("split", {"train", "valid", "test"})).questions.size());
}

TaskCommands vqa_commands() {
  return {"vqa", vqa_train_command_line, train_vqa_command, vqa_eval_command_line, eval_vqa_command, vqa_eval_examples,
          {crosscheck::dump_vqa, {{"{attn}", "--attn {attn}"}},
           "attn vocab answers regions features src-len emb-size hidden-size attn-size samples temperature alpha"}};
}

}  // namespace lava
