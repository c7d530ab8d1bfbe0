// lava translate: beam-search translations of a file of tokenised source sentences with a trained model.
#include <chrono>
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/read_file.hpp"
#include "data/tokenize.hpp"
#include "tasks/nmt/beam_search.hpp"
#include "tasks/nmt/trainer.hpp"
#include "report/progress.hpp"

namespace lava {

void add_decode_options(CommandLine& cl) {
  cl.options().add_options()                                                                                     //
      ("beam", po::value<std::string>()->default_value("10"), "beam size (1 = greedy)")                          //
      ("alpha", po::value<std::string>()->default_value("1"), "length penalty ((5+|Y|)/6)^alpha (0 = off)")     //
      ("eos-norm", po::value<std::string>()->default_value("3"),
       "lower log p(</s>) at output token j by EOS_NORM*src_len/(j+1) (0 = off)")                                //
      ("max-len-ratio", po::value<std::string>()->default_value("2"),
       "at most floor(RATIO*src_len) + MAX_LEN_EXTRA output words")                                              //
      ("max-len-extra", po::value<std::string>()->default_value("10"), "see --max-len-ratio");
}

DecodeOptions decode_options(const CommandLine& cl) {
  DecodeOptions o;
  o.beam = int(cl.get_int("beam", 1, 1000));
  o.alpha = cl.get_double("alpha", 0, 100);
  o.eos_norm = cl.get_double("eos-norm", 0, 1e6);
  o.max_len_ratio = cl.get_double("max-len-ratio", 0, 1000);
  o.max_len_extra = int(cl.get_int("max-len-extra", 0, 100000));
  return o;
}

int cmd_translate(int argc, char** argv) {
  CommandLine cl("translate", "lava translate --model MODEL --input FILE [--output FILE] [--beam K] [options]",
                 "Translates FILE, one tokenised source sentence per line (tokens separated by spaces, words\n"
                 "outside the model's vocabulary read as <unk>), into one line per input line: the best beam-search\n"
                 "hypothesis, tokens joined by spaces and BPE \"@@ \" markers joined. An empty line gives an empty line.\n"
                 "Each step's word distribution is the exact marginal over source positions under the prior for\n"
                 "latent variants (log sum_i p(z=i) f(x,e_i)), and f(x, E_p z) for soft/none (src/method.md §4.2).\n"
                 "Hypotheses are ranked by log-probability (with the EOS penalty) / ((5+|Y|)/6)^alpha.\n"
                 "Without --output (or with --output -) the translations go to stdout. A regular file is replaced atomically;\n"
                 "a symlink is followed and its target replaced; a FIFO or a device (/dev/stdout) is written into.");
  cl.options().add_options()                                                                        //
      ("model", po::value<std::string>(), "checkpoint written by lava train --save")              //
      ("input", po::value<std::string>(), "tokenised source sentences, one per line")              //
      ("output", po::value<std::string>(), "write the translations here (default and -: stdout)")        //
      ("max-tokens", po::value<std::string>()->default_value("1000"), "a longer input line is an error")  //
      ("kmax", po::value<std::string>()->default_value("0"), "K-max prior: only its K largest positions (0 = all)")  //
      ("batch-size", po::value<std::string>()->default_value("16"), "sentences decoded together");
  add_decode_options(cl);
  if (!cl.parse(argc, argv)) return 0;
  DecodeOptions opt = decode_options(cl);
  opt.kmax = int(cl.get_int("kmax", 0, 100000));
  opt.batch_size = int(cl.get_int("batch-size", 1, 100000));
  const int max_tokens = int(cl.get_int("max-tokens", 1, 1000000));
  const std::string input = cl.get_string("input");
  LoadedNmt m = load_nmt(cl.get_string("model"));

  // The input: every line checked before any decoding, so a bad line costs nothing.
  const std::string bytes = read_file(input, kTextDataLimit);
  std::vector<std::vector<int32_t>> sources;
  int64_t unknown = 0, words = 0;
  for (size_t pos = bytes.starts_with("\xEF\xBB\xBF") ? 3 : 0; pos < bytes.size();) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) end = bytes.size();
    const std::string_view line = std::string_view(bytes).substr(pos, end - pos);  // a '\r' is white space
    const long line_no = long(sources.size() + 1);
    if (!is_valid_utf8(line)) throw input_error(input, line_no, "invalid UTF-8");
    if (const size_t n = split_tokens(line).size(); n > size_t(max_tokens))
      throw input_error(input, line_no, fmt::format("line has {} tokens, more than --max-tokens {}", n, max_tokens));
    sources.emplace_back();
    unknown += m.src_vocab.encode(line, sources.back());
    words += int64_t(sources.back().size());
    pos = end + 1;
  }

  const auto start = std::chrono::steady_clock::now();
  Progress progress(int64_t(sources.size()), "translate");
  const std::vector<Translation> out =
      translate_corpus(*m.model, sources, opt, [&](int64_t done) { progress.update(done); });
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::string text;
  int64_t out_words = 0;
  for (const Translation& t : out) {
    text += translation_text(t, m.tgt_vocab);
    text += '\n';
    out_words += int64_t(t.tokens.size());
  }
  write_file_atomic(cl.has("output") ? cl.get_string("output") : "-", text);
  if (!cl.common().quiet)
    fmt::print(stderr, "lava translate: {} sentences, {} source tokens ({} <unk>), {} output tokens, {:.1f} s ({:.2f} sentences/s)\n",
               sources.size(), words, unknown, out_words, seconds, double(sources.size()) / std::max(seconds, 1e-9));
  return 0;
}

}  // namespace lava
