// lava align: word alignments of a corpus split from a trained model, in the Pharaoh format, optionally scored.
#include <chrono>
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "tasks/nmt/alignments.hpp"
#include "tasks/nmt/model_file.hpp"

namespace lava {

namespace {

std::string pharaoh_text(const std::vector<SentenceAlignment>& lines) {
  std::string text;
  for (const SentenceAlignment& links : lines) {
    for (size_t k = 0; k < links.size(); ++k)
      text += fmt::format("{}{}-{}", k ? " " : "", links[k].src, links[k].tgt);
    text += '\n';
  }
  return text;
}

}  // namespace

int cmd_align(int argc, char** argv) {
  CommandLine cl("align",
                 "lava align --model MODEL --data DIR [--split test] [--which posterior] [--out FILE] [--gold FILE]",
                 "Aligns every sentence pair of a corpus split with a trained model: each target word j (the </s>\n"
                 "step excluded) is linked to the source word i with the largest probability (ties: the lowest i)\n"
                 "under --which:\n"
                 "  prior      p(z_j = i | x, y_<j), the attention the decoder reads before it sees y_j\n"
                 "  posterior  p(z_j = i | x, y) ~ p(z_j = i) f(x, z_j = i)_{y_j}, exact over source positions\n"
                 "  q          the inference network q(z_j = i | x, y) (variants with q only)\n"
                 "Output: one line per line of the split's files, in the Pharaoh format \"i-j ...\" (source index\n"
                 "first, 0-based, as fast_align and the `lava data synth` gold); a pair the reader skips (an empty\n"
                 "side) gets an empty line. Positions count the tokens of the files as they are (BPE pieces are\n"
                 "tokens).\n"
                 "Written to stdout (also with --out -), or to --out FILE (core/atomic_file.hpp: a regular file is replaced\n"
                 "atomically, a symlink is followed, a FIFO or device is written into).\n"
                 "--gold FILE scores the alignments against a Pharaoh file with one line per line of the split\n"
                 "(possible links as i?j or ipj): corpus-level AER = 1 - (|A&S| + |A&P|) / (|A| + |S|), precision\n"
                 "|A&P|/|A| and recall |A&S|/|S|. The scores go to stderr with --format table; with --format json or\n"
                 "csv to stdout when --out is given (else to stderr, since stdout holds the alignments).");
  cl.options().add_options()                                                                         //
      ("model", po::value<std::string>(), "checkpoint written by lava train --save")                //
      ("data", po::value<std::string>(), "corpus directory")                                        //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")              //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")              //
      ("split", po::value<std::string>()->default_value("test"), "train|valid|test")                //
      ("which", po::value<std::string>()->default_value("posterior"), "prior|posterior|q")          //
      ("out", po::value<std::string>(), "write the alignments here (default and -: stdout)")              //
      ("gold", po::value<std::string>(), "gold alignments of the split (Pharaoh): report AER")      //
      ("batch-size", po::value<std::string>()->default_value("32"), "sentences per batch");
  if (!cl.parse(argc, argv)) return 0;
  const std::string split_name = cl.get_choice("split", {"train", "valid", "test"});
  const AlignWhich which = parse_align_which(cl.get_choice("which", {"prior", "posterior", "q"}));
  const int batch_size = int(cl.get_int("batch-size", 1, 100000));
  CorpusOptions co;
  co.dir = cl.get_string("data");
  co.src_lang = cl.get_string("src");
  co.tgt_lang = cl.get_string("tgt");
  const std::string out_path = cl.has("out") ? cl.get_string("out") : "";
  const std::string gold_path = cl.has("gold") ? cl.get_string("gold") : "";

  LoadedNmt m = load_nmt(cl.get_string("model"));
  const char* attn = variant_info(m.model->config().attn).name;
  if (which == AlignWhich::q && !variant_info(m.model->config().attn).uses_q)
    cl.fail(fmt::format("--which q: this model (--attn {}) has no inference network q(z|x,y); use prior or posterior",
                        attn));
  const CorpusSplit split =
      split_name == "train" ? CorpusSplit::train : split_name == "valid" ? CorpusSplit::valid : CorpusSplit::test;
  const ParallelSplit data = read_parallel_split(co, split, m.src_vocab, m.tgt_vocab);
  // The gold is read and checked first: a wrong file costs no model time.
  const std::vector<SentenceAlignment> gold = gold_path.empty() ? std::vector<SentenceAlignment>{}
                                                                : read_gold_alignments(data, gold_path);

  const auto start = std::chrono::steady_clock::now();
  const std::vector<SentenceAlignment> lines =
      alignments_by_line(data, predict_alignments(*m.model, data, which, batch_size));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string text = pharaoh_text(lines);
  const bool to_stdout = out_path.empty() || out_path == "-";
  write_file_atomic(to_stdout ? "-" : out_path, text);
  if (!cl.common().quiet) {
    int64_t links = 0;
    for (const SentenceAlignment& l : lines) links += int64_t(l.size());
    fmt::print(stderr, "lava align: {} lines ({} skipped with an empty side), {} links from the {} of {}, {:.1f} s\n",
               data.stats.lines, data.stats.empty_skipped, links, align_which_name(which), attn, seconds);
  }

  if (!gold_path.empty()) {
    const AlignmentScore s = score_alignments(lines, gold);
    Table t;
    t.add_column("attn").add_column("split").add_column("which").add_column("sentences").add_column("links");
    t.add_column("gold_sure").add_column("aer", ".4f").add_column("precision", ".4f").add_column("recall", ".4f");
    t.add_row({attn, split_name, align_which_name(which), double(data.stats.lines), double(s.hyp), double(s.sure),
               s.aer(), s.precision(), s.recall()});
    const OutputFormat format = cl.common().format;
    t.print(format == OutputFormat::table || to_stdout ? stderr : stdout, format);
  }
  return 0;
}

}  // namespace lava
