// lava eval: exact per-token figures of a trained model on a split.
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "models/nmt_trainer.hpp"

namespace lava {

int cmd_eval(int argc, char** argv) {
  CommandLine cl("eval", "lava eval --model MODEL --data DIR [--split test] [options]",
                 "Evaluates a trained model per target token: nll and ppl of the exact marginal under the prior\n"
                 "(enumerated over source positions for every latent variant; direct for soft/none), elbo, kl = KL(q||p),\n"
                 "kl_gap = log p - ELBO, kl_posterior = KL(q || exact posterior) computed directly (it must equal\n"
                 "kl_gap), identity_error (the largest per-token difference), and the prior's entropy.\n"
                 "Variants without q report the ELBO at q = p (the Jensen bound). --kmax K renormalises the prior\n"
                 "over its K largest positions first.");
  cl.options().add_options()                                                              //
      ("model", po::value<std::string>(), "checkpoint written by lava train --save")        //
      ("data", po::value<std::string>(), "corpus directory")                                //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")      //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")      //
      ("split", po::value<std::string>()->default_value("test"), "train|valid|test")        //
      ("kmax", po::value<std::string>()->default_value("0"), "K-max attention (0 = exact)")  //
      ("batch-size", po::value<std::string>()->default_value("32"), "sentences per batch");
  if (!cl.parse(argc, argv)) return 0;
  const std::string split_name = cl.get_choice("split", {"train", "valid", "test"});
  const int kmax = int(cl.get_int("kmax", 0, 100000));
  const int batch_size = int(cl.get_int("batch-size", 1, 100000));
  LoadedNmt m = load_nmt(cl.get_string("model"));
  CorpusOptions co;
  co.dir = cl.get_string("data");
  co.src_lang = cl.get_string("src");
  co.tgt_lang = cl.get_string("tgt");
  const CorpusSplit split =
      split_name == "train" ? CorpusSplit::train : split_name == "valid" ? CorpusSplit::valid : CorpusSplit::test;
  const ParallelSplit data = read_parallel_split(co, split, m.src_vocab, m.tgt_vocab);
  const NmtEvalFigures f = evaluate_nmt(*m.model, data, batch_size, kmax, cl.common().seed);

  Table t;
  t.add_column("attn").add_column("split").add_column("tokens").add_column("nll", ".4f").add_column("ppl", ".3f");
  t.add_column("elbo", ".4f").add_column("kl", ".4f").add_column("kl_gap", ".5f").add_column("kl_posterior", ".5f");
  t.add_column("identity_error", ".1e").add_column("entropy", ".3f").add_column("kmax");
  t.add_row({variant_info(m.model->config().attn).name, split_name, f.tokens, f.nll, f.ppl, f.elbo, f.kl, f.kl_gap,
             f.kl_posterior, f.identity_error, f.entropy, double(kmax)});
  t.print(stdout, cl.common().format);
  return 0;
}

}  // namespace lava
