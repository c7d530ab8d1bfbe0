// lava train --task nmt and lava eval --task nmt: an attention model on a parallel corpus. Training keeps the best
// checkpoint by validation, stops on SIGINT/SIGTERM with a resume state, continues with --resume and draws pictures
// with --plot; evaluation gives the exact per-token figures of a trained model on a split.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>

#include "cli/command_line.hpp"
#include "cli/crosscheck_dump.hpp"
#include "cli/commands.hpp"
#include "cli/loop_options.hpp"
#include "cli/option_table.hpp"
#include "cli/task_registry.hpp"
#include "cli/variant_options.hpp"
#include "data/parallel_corpus.hpp"
#include "data/vocab.hpp"
#include "eval/bleu.hpp"
#include "report/progress.hpp"
#include "tasks/nmt/alignments.hpp"
#include "tasks/nmt/beam_search.hpp"
#include "tasks/nmt/eval.hpp"
#include "tasks/nmt/model_file.hpp"
#include "tasks/nmt/trainer.hpp"

namespace lava {

namespace {

// "10,20,30" -> {10, 20, 30}: strictly increasing non-negative upper bounds of the source-length buckets.
std::vector<int64_t> parse_length_buckets(const CommandLine& cl) {
  const std::string text = cl.get_string("length-buckets");
  std::vector<int64_t> bounds;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    errno = 0;
    const long long v = item.empty() ? -1 : std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || errno || *end || v < 0 || (!bounds.empty() && v <= bounds.back()))
      cl.fail("--length-buckets wants strictly increasing non-negative integers like 10,20,30, not '" + text + "'");
    bounds.push_back(v);
    pos = comma + 1;
  }
  return bounds;
}

std::unique_ptr<CommandLine> nmt_train_command_line() {
  auto cl = std::make_unique<CommandLine>(
      "train", "lava train --task nmt --data DIR --attn VARIANT [--save MODEL] [options]",
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
  cl->options().add_options()                                                                    //
      ("data", po::value<std::string>(), "corpus directory")                                     //
      ("plot", po::value<std::string>(), "after each epoch write learning curves and attention heatmaps (SVG) here");
  add_option_table(cl->options(), nmt_corpus_options(), NmtCorpusOptions());
  add_choice_table(cl->options(), nmt_choice_options(), Seq2SeqConfig());
  add_option_table(cl->options(), nmt_model_options(), Seq2SeqConfig());
  add_loop_options(cl->options(), NmtTrainOptions().loop, "sentence pairs");
  add_variant_options(cl->options(), "nmt");
  return cl;
}

int train_nmt_command(const CommandLine& cl) {
  NmtTrainOptions o;
  o.corpus.dir = cl.get_string("data");
  read_option_table(cl, nmt_corpus_options(), o.corpus);
  read_choice_table(cl, nmt_choice_options(), o.model);
  read_option_table(cl, nmt_model_options(), o.model);
  if (o.model.hidden % 2) cl.fail("--hidden-size must be even (two encoder directions)");
  if (o.model.inf_hidden % 2) cl.fail("--inf-hidden must be even (two directions)");
  read_variant_options(cl, o.model.attn, o.model.variant, o.objective);
  read_loop_options(cl, o.loop);
  if (cl.has("plot")) o.plot_dir = cl.get_string("plot");

  return print_train_result(o.loop, train_nmt(o));
}

std::unique_ptr<CommandLine> nmt_eval_command_line() {
  auto cl = std::make_unique<CommandLine>(
      "eval", "lava eval --model MODEL --data DIR [--split test] [options]",
      "Evaluates a trained model per target token: nll and ppl of the exact marginal under the prior\n"
      "(enumerated over source positions for every latent variant; direct for soft/none), elbo, kl = KL(q||p),\n"
      "kl_gap = log p - ELBO, kl_posterior = KL(q || exact posterior) computed directly (it must equal\n"
      "kl_gap), identity_error (the largest per-token difference), and the prior's entropy.\n"
      "Variants without q report the ELBO at q = p (the Jensen bound). --kmax K renormalises the prior\n"
      "over its K largest positions first; where q keeps mass on a cut position (a variant with an inference\n"
      "network), log p_K = -inf there, so elbo, kl, kl_gap and kl_posterior are infinite (null in JSON lines)\n"
      "and q_mass_cut is q's mean mass per token on the cut positions; identity_error is then over the tokens\n"
      "with a finite ELBO (null if there is none). likelihood says how nll is obtained: exact\n"
      "(enumerated), direct (a deterministic attention) or sampled: the continuous latents report the\n"
      "importance-weighted estimate log 1/K sum_k f(x,z_k) p(z_k)/q(z_k) with K = --eval-samples draws from\n"
      "q (a stochastic lower bound), kl_gap = that - ELBO, kl_posterior/identity_error null (no exact\n"
      "posterior), and nll_mean_attn, the nll at the mean attention that decoding and accuracy use.\n"
      "--bleu also decodes the split by beam search (the exact marginal word distribution, as `lava\n"
      "translate`, with the same --kmax) and reports corpus BLEU (multi-bleu.perl) against the split's\n"
      "target side, BPE \"@@ \" markers joined on both sides; --length-buckets 10,20,30 adds BLEU by source\n"
      "length (one row per bucket before the main row). accuracy is the fraction of target tokens that are\n"
      "the argmax of that same word distribution, teacher-forced.\n"
      "--gold-align FILE (one Pharaoh line per line of the split's files, source index first) adds the\n"
      "alignment error rate of the argmax alignments of the prior, the exact posterior and q (see lava align);\n"
      "with --limit N, over the lines of the split's first N pairs.");
  cl->options().add_options()                                                             //
      ("model", po::value<std::string>(), "checkpoint written by lava train --save")        //
      ("data", po::value<std::string>(), "corpus directory")                                //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")      //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")      //
      ("split", po::value<std::string>()->default_value("test"), "train|valid|test")        //
      ("kmax", po::value<std::string>()->default_value("0"), "K-max attention (0 = exact)")  //
      ("batch-size", po::value<std::string>()->default_value("32"), "sentences per batch")  //
      ("limit", po::value<std::string>()->default_value("0"), "only the first N sentences (0 = all)")  //
      ("bleu", po::bool_switch(), "also decode the split and report corpus BLEU")            //
      ("gold-align", po::value<std::string>(), "Pharaoh gold alignments of the split: adds AER of prior/posterior/q")  //
      ("length-buckets", po::value<std::string>(), "with --bleu: BLEU by source length, upper bounds e.g. 10,20,30")  //
      ("eval-samples", po::value<std::string>(),
       "sampled variants: samples per token of the importance-weighted likelihood (default: the model's)");
  add_decode_options(*cl);
  return cl;
}

int eval_nmt_command(const CommandLine& cl) {
  const std::string split_name = cl.get_choice("split", {"train", "valid", "test"});
  const int kmax = int(cl.get_int("kmax", 0, 100000));
  const int batch_size = int(cl.get_int("batch-size", 1, 100000));
  const int64_t limit = cl.get_int("limit", 0, INT64_MAX);
  LoadedNmt m = load_nmt(cl.get_string("model"));
  if (cl.has("eval-samples")) {
    const int k = int(cl.get_int("eval-samples", 1, 100000));
    refuse_unread_options(cl, m.model->config().attn, {"eval-samples"}, "the model's --attn");
    m.model->set_eval_samples(k);
  }
  CorpusOptions co;
  co.dir = cl.get_string("data");
  co.src_lang = cl.get_string("src");
  co.tgt_lang = cl.get_string("tgt");
  const bool bleu = cl.vm()["bleu"].as<bool>();
  std::vector<int64_t> buckets;
  if (cl.has("length-buckets")) {
    if (!bleu) cl.fail("--length-buckets needs --bleu");
    buckets = parse_length_buckets(cl);
  }
  DecodeOptions dopt = decode_options(cl);
  dopt.kmax = kmax, dopt.batch_size = batch_size;
  co.keep_target_tokens = bleu;
  const CorpusSplit split = corpus_split(split_name);
  ParallelSplit data = read_parallel_split(co, split, m.src_vocab, m.tgt_vocab);
  // The gold is read and checked against the whole split before --limit drops pairs and before any model time.
  std::optional<std::vector<SentenceAlignment>> gold;
  if (cl.has("gold-align")) gold = read_gold_alignments(data, cl.get_string("gold-align"));
  if (limit > 0 && int64_t(data.pairs.size()) > limit) {
    data.pairs.resize(size_t(limit));
    if (bleu) data.tgt_tokens.resize(size_t(limit));
  }
  const NmtEvalFigures f = evaluate_nmt(*m.model, data, batch_size, kmax, cl.common().seed, true);

  std::optional<AlignmentEvaluation> aer;
  if (gold) aer = evaluate_alignments(*m.model, data, *gold, batch_size);

  BleuScore score;
  if (bleu) {
    std::vector<std::vector<int32_t>> sources;
    for (const SentencePair& p : data.pairs) sources.push_back(p.src);
    Progress progress(int64_t(sources.size()), "decode");
    const std::vector<Translation> hyps =
        translate_corpus(*m.model, sources, dopt, [&](int64_t done) { progress.update(done); });
    progress.finish();
    TokenizedCorpus hyp_words, ref_words;
    for (size_t k = 0; k < hyps.size(); ++k) {
      std::string ref;
      for (const std::string& w : data.tgt_tokens[k]) ref += (ref.empty() ? "" : " ") + w;
      auto words = [](const std::string& text) {
        std::vector<std::string> out;
        for (std::string_view w : split_tokens(text)) out.emplace_back(w);
        return out;
      };
      hyp_words.push_back(words(translation_text(hyps[k], m.tgt_vocab)));
      ref_words.push_back(words(join_bpe(ref)));
    }
    score = corpus_bleu(hyp_words, ref_words);
    if (!cl.common().quiet) fmt::print(stderr, "{}\n", format_multi_bleu(score));
    if (!buckets.empty()) {
      std::vector<int64_t> source_lengths;
      for (const SentencePair& p : data.pairs) source_lengths.push_back(int64_t(p.src.size()));
      Table bt;
      bt.add_column("event").add_column("task").add_column("min_len").add_column("max_len").add_column("sentences").add_column("bleu", ".2f");
      for (const BleuBucket& b : bleu_by_source_length(hyp_words, ref_words, source_lengths, buckets))
        bt.add_row({"bleu_bucket", "nmt", b.min_len, b.max_len == INT64_MAX ? NAN : double(b.max_len), b.sentences,
                    b.score.bleu});
      bt.print(stdout, cl.common().format);
    }
  }

  Table t;
  t.add_column("task").add_column("attn").add_column("split").add_column("tokens").add_column("nll", ".4f").add_column("ppl", ".3f");
  t.add_column("elbo", ".4f").add_column("kl", ".4f").add_column("kl_gap", ".5f").add_column("kl_posterior", ".5f");
  t.add_column("identity_error", ".1e").add_column("entropy", ".3f").add_column("accuracy", ".4f").add_column("kmax");
  t.add_column("likelihood");
  const AttnVariant attn = m.model->config().attn;
  std::vector<Cell> row = {"nmt", variant_info(attn).name, split_name, f.tokens, f.nll, f.ppl, f.elbo, f.kl,
                           f.kl_gap, f.kl_posterior, f.identity_error, f.entropy, f.accuracy, double(kmax),
                           likelihood_kind(attn)};
  if (variant_info(attn).sampled) {
    t.add_column("nll_mean_attn", ".4f").add_column("eval_samples");
    row.emplace_back(f.nll_mean_attn);
    row.emplace_back(double(m.model->config().variant.eval_samples));
  }
  if (variant_info(attn).sparse) {
    t.add_column("support", ".3f");
    row.emplace_back(f.support);
  }
  if (kmax > 0) {
    t.add_column("q_mass_cut", ".4f");
    row.emplace_back(f.q_mass_cut);
  }
  if (bleu) {
    t.add_column("bleu", ".2f").add_column("beam");
    row.push_back(score.bleu);
    row.push_back(double(dopt.beam));
  }
  if (aer) {
    t.add_column("aer_prior", ".4f").add_column("aer_posterior", ".4f").add_column("aer_q", ".4f");
    for (double x : {aer->prior.aer(), aer->posterior.aer(), aer->q ? aer->q->aer() : NAN}) row.emplace_back(x);
  }
  t.add_row(row);
  t.print(stdout, cl.common().format);
  return 0;
}

}  // namespace

// lava eval's pairs with no empty side: eval_nmt_command sets no max_len, so no split is length-filtered.
int64_t nmt_eval_examples(const CommandLine& cl) {
  if (!cl.has("data")) cl.fail("--data is required");
  CorpusOptions co;
  co.dir = cl.get_string("data");
  co.src_lang = cl.get_string("src");
  co.tgt_lang = cl.get_string("tgt");
  return count_parallel_split(co, corpus_split(cl.get_choice("split", {"train", "valid", "test"}))).pairs;
}

TaskCommands nmt_commands() {
  // Every cross-checked variant with the mlp scorer and two layers, and the sparse ones again with 1.5-entmax.
  return {"nmt", nmt_train_command_line, train_nmt_command, nmt_eval_command_line, eval_nmt_command, nmt_eval_examples,
          {crosscheck::dump_nmt,
           {{"{attn}-mlp", "--attn {attn} --score mlp --layers 2"}, {"{sparse}-entmax", "--attn {sparse} --alpha 1.5"}},
           "data attn score vocab src-len tgt-len emb-size hidden-size layers attn-size inf-hidden samples temperature "
           "alpha kmax"}};
}

}  // namespace lava
