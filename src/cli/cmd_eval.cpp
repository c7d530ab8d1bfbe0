// lava eval: exact per-token figures of a trained model on a split.
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "data/vocab.hpp"
#include "eval/bleu.hpp"
#include "models/beam_search.hpp"
#include "models/nmt_trainer.hpp"
#include "report/progress.hpp"

namespace lava {

int cmd_eval(int argc, char** argv) {
  CommandLine cl("eval", "lava eval --model MODEL --data DIR [--split test] [options]",
                 "Evaluates a trained model per target token: nll and ppl of the exact marginal under the prior\n"
                 "(enumerated over source positions for every latent variant; direct for soft/none), elbo, kl = KL(q||p),\n"
                 "kl_gap = log p - ELBO, kl_posterior = KL(q || exact posterior) computed directly (it must equal\n"
                 "kl_gap), identity_error (the largest per-token difference), and the prior's entropy.\n"
                 "Variants without q report the ELBO at q = p (the Jensen bound). --kmax K renormalises the prior\n"
                 "over its K largest positions first.\n"
                 "--bleu also decodes the split by beam search (the exact marginal word distribution, as `lava\n"
                 "translate`, with the same --kmax) and reports corpus BLEU (multi-bleu.perl) against the split's\n"
                 "target side, BPE \"@@ \" markers joined on both sides.");
  cl.options().add_options()                                                              //
      ("model", po::value<std::string>(), "checkpoint written by lava train --save")        //
      ("data", po::value<std::string>(), "corpus directory")                                //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")      //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")      //
      ("split", po::value<std::string>()->default_value("test"), "train|valid|test")        //
      ("kmax", po::value<std::string>()->default_value("0"), "K-max attention (0 = exact)")  //
      ("batch-size", po::value<std::string>()->default_value("32"), "sentences per batch")  //
      ("bleu", po::bool_switch(), "also decode the split and report corpus BLEU");
  add_decode_options(cl);
  if (!cl.parse(argc, argv)) return 0;
  const std::string split_name = cl.get_choice("split", {"train", "valid", "test"});
  const int kmax = int(cl.get_int("kmax", 0, 100000));
  const int batch_size = int(cl.get_int("batch-size", 1, 100000));
  LoadedNmt m = load_nmt(cl.get_string("model"));
  CorpusOptions co;
  co.dir = cl.get_string("data");
  co.src_lang = cl.get_string("src");
  co.tgt_lang = cl.get_string("tgt");
  const bool bleu = cl.vm()["bleu"].as<bool>();
  DecodeOptions dopt = decode_options(cl);
  dopt.kmax = kmax, dopt.batch_size = batch_size;
  co.keep_target_tokens = bleu;
  const CorpusSplit split =
      split_name == "train" ? CorpusSplit::train : split_name == "valid" ? CorpusSplit::valid : CorpusSplit::test;
  const ParallelSplit data = read_parallel_split(co, split, m.src_vocab, m.tgt_vocab);
  const NmtEvalFigures f = evaluate_nmt(*m.model, data, batch_size, kmax, cl.common().seed);

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
  }

  Table t;
  t.add_column("attn").add_column("split").add_column("tokens").add_column("nll", ".4f").add_column("ppl", ".3f");
  t.add_column("elbo", ".4f").add_column("kl", ".4f").add_column("kl_gap", ".5f").add_column("kl_posterior", ".5f");
  t.add_column("identity_error", ".1e").add_column("entropy", ".3f").add_column("kmax");
  std::vector<Cell> row = {variant_info(m.model->config().attn).name, split_name, f.tokens, f.nll, f.ppl, f.elbo, f.kl,
                           f.kl_gap, f.kl_posterior, f.identity_error, f.entropy, double(kmax)};
  if (bleu) {
    t.add_column("bleu", ".2f").add_column("beam");
    row.push_back(score.bleu);
    row.push_back(double(dopt.beam));
  }
  t.add_row(row);
  t.print(stdout, cl.common().format);
  return 0;
}

}  // namespace lava
