// lava translate: beam-search translations of source sentences, raw or tokenised, from a file or standard input.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "core/arriving_lines.hpp"
#include "core/atomic_file.hpp"
#include "core/read_file.hpp"
#include "core/utf8.hpp"
#include "data/corpus_tokenization.hpp"
#include "tasks/nmt/beam_search.hpp"
#include "tasks/nmt/trainer.hpp"
#include "report/progress.hpp"

namespace lava {

void add_decode_options(CommandLine& cl) {
  cl.options().add_options()                                                                                     //
      ("beam", po::value<std::string>()->default_value("10"), "beam size (1 = greedy)")                          //
      ("length-penalty", po::value<std::string>()->default_value("1"),
       "rank finished hypotheses by log p(Y) / ((5+|Y|)/6)^A, GNMT's length penalty (0 = off)")                //
      ("eos-norm", po::value<std::string>()->default_value("3"),
       "lower log p(</s>) at output token j by EOS_NORM*src_len/(j+1) (0 = off)")                                //
      ("max-len-ratio", po::value<std::string>()->default_value("2"),
       "at most floor(RATIO*src_len) + MAX_LEN_EXTRA output words")                                              //
      ("max-len-extra", po::value<std::string>()->default_value("10"), "see --max-len-ratio");
}

DecodeOptions decode_options(const CommandLine& cl) {
  DecodeOptions o;
  o.beam = int(cl.get_int("beam", 1, 1000));
  o.alpha = cl.get_double("length-penalty", 0, 100);
  o.eos_norm = cl.get_double("eos-norm", 0, 1e6);
  o.max_len_ratio = cl.get_double("max-len-ratio", 0, 1000);
  o.max_len_extra = int(cl.get_int("max-len-extra", 0, 100000));
  return o;
}

namespace {

// One input line at most this long: far beyond --max-tokens' default, short of a file that is not text.
constexpr uint64_t kMaxSourceLine = 4 * kMiB;

// Source lines to token ids: checked, tokenised as the training corpus was (or taken as tokenised), encoded.
class SourceEncoder {
 public:
  SourceEncoder(const LoadedNmt& m, const CorpusTokenization& tokenization, const std::string& model_path,
                int max_tokens)
      : vocab_(m.src_vocab), tokenizer_(tokenization, model_path), max_tokens_(max_tokens) {}

  std::vector<int32_t> encode(std::string_view line, const std::string& origin, long line_no) {
    if (line_no == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // a byte-order mark
    if (!is_valid_utf8(line)) throw input_error(origin, line_no, "invalid UTF-8");
    const std::string tokens = tokenizer_.tokenize_line(line);
    if (const size_t n = split_tokens(tokens).size(); n > size_t(max_tokens_))
      throw input_error(origin, line_no, fmt::format("line has {} tokens, more than --max-tokens {}", n, max_tokens_));
    std::vector<int32_t> ids;
    unknown_ += vocab_.encode(tokens, ids);
    words_ += int64_t(ids.size());
    ++sentences_;
    return ids;
  }
  std::string summary() const {
    return fmt::format("{} sentences, {} source tokens ({} <unk>)", sentences_, words_, unknown_);
  }
  int64_t sentences() const { return sentences_; }

 private:
  const Vocab& vocab_;
  SourceTokenizer tokenizer_;
  int max_tokens_;
  int64_t unknown_ = 0, words_ = 0, sentences_ = 0;
};

std::string translations_text(const std::vector<Translation>& out, const Vocab& tgt_vocab, int64_t& out_words) {
  std::string text;
  for (const Translation& t : out) {
    text += translation_text(t, tgt_vocab);
    text += '\n';
    out_words += int64_t(t.tokens.size());
  }
  return text;
}

}  // namespace

int cmd_translate(int argc, char** argv) {
  CommandLine cl("translate", "lava translate --model MODEL [--input FILE] [--output FILE] [--beam K] [options]",
                 "Translates FILE (without --input, or with --input -: standard input), one source sentence per line,\n"
                 "into one line per input line: the best beam-search hypothesis, tokens joined by spaces and BPE \"@@ \"\n"
                 "markers joined. An empty line gives an empty line. Raw text is tokenised as the model's training corpus\n"
                 "was (the word tokeniser of lava data gettext: lower case, punctuation split off; then the corpus's BPE\n"
                 "subword model for a lava data bpe corpus), both recorded in the model file. A model file without that\n"
                 "record (trained before it existed, or on a corpus tokenised elsewhere) and --tokenized take tokenised\n"
                 "input: tokens separated by spaces, BPE-split as the corpus was. Words outside the vocabulary read as <unk>.\n"
                 "Standard input is translated as it arrives (a line typed is answered at once); a file is checked whole\n"
                 "before anything is decoded.\n"
                 "Each step's word distribution is the exact marginal over source positions under the prior for\n"
                 "latent variants (log sum_i p(z=i) f(x,e_i)), and f(x, E_p z) for soft/none (src/method.md §4.2).\n"
                 "Hypotheses are ranked by log-probability (with the EOS penalty) / ((5+|Y|)/6)^alpha.\n"
                 "Without --output (or with --output -) the translations go to stdout. A regular file is replaced atomically;\n"
                 "a symlink is followed and its target replaced; a FIFO or a device (/dev/stdout) is written into.");
  cl.options().add_options()                                                                        //
      ("model", po::value<std::string>(), "checkpoint written by lava train --save")              //
      ("input", po::value<std::string>(), "source sentences, one per line (default and -: stdin)")  //
      ("output", po::value<std::string>(), "write the translations here (default and -: stdout)")        //
      ("tokenized", po::bool_switch(), "the input is tokenised already: split at spaces only")  //
      ("max-tokens", po::value<std::string>()->default_value("1000"), "a longer input line is an error")  //
      ("kmax", po::value<std::string>()->default_value("0"), "K-max prior: only its K largest positions (0 = all)")  //
      ("batch-size", po::value<std::string>()->default_value("16"), "sentences decoded together");
  add_decode_options(cl);
  if (!cl.parse(argc, argv)) return 0;
  DecodeOptions opt = decode_options(cl);
  opt.kmax = int(cl.get_int("kmax", 0, 100000));
  opt.batch_size = int(cl.get_int("batch-size", 1, 100000));
  const int max_tokens = int(cl.get_int("max-tokens", 1, 1000000));
  const std::string input = cl.has("input") ? cl.get_string("input") : "-";
  const std::string output = cl.has("output") ? cl.get_string("output") : "-";
  const std::string model_path = cl.get_string("model");
  LoadedNmt m = load_nmt(model_path);
  SourceEncoder encoder(m, cl.vm()["tokenized"].as<bool>() ? CorpusTokenization{} : m.tokenization, model_path,
                        max_tokens);
  const auto start = std::chrono::steady_clock::now();
  int64_t out_words = 0;

  if (input == "-" && output == "-") {
    // Streaming: each batch of the lines that have arrived is translated and written before more are read.
    ArrivingLines in(STDIN_FILENO, "-", kMaxSourceLine);
    std::vector<std::string> lines;
    while (in.next_batch(lines, size_t(opt.batch_size))) {
      std::vector<std::vector<int32_t>> sources;
      for (size_t k = 0; k < lines.size(); ++k)
        sources.push_back(encoder.encode(lines[k], "-", in.first_line_number() + long(k)));
      const std::string text = translations_text(translate_corpus(*m.model, sources, opt), m.tgt_vocab, out_words);
      if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
        throw input_error("-", 0, "cannot write the translations to standard output");
    }
  } else {
    // The input: every line checked before any decoding, so a bad line costs nothing.
    std::vector<std::vector<int32_t>> sources;
    if (input == "-") {
      ArrivingLines in(STDIN_FILENO, "-", kMaxSourceLine);
      for (std::vector<std::string> lines; in.next_batch(lines, 1 << 16);)
        for (size_t k = 0; k < lines.size(); ++k)
          sources.push_back(encoder.encode(lines[k], "-", in.first_line_number() + long(k)));
    } else {
      const std::string bytes = read_file(input, kTextDataLimit);
      for (size_t pos = 0; pos < bytes.size();) {
        size_t end = bytes.find('\n', pos);
        if (end == std::string::npos) end = bytes.size();
        // a '\r' is white space
        sources.push_back(encoder.encode(std::string_view(bytes).substr(pos, end - pos), input, long(sources.size() + 1)));
        pos = end + 1;
      }
    }
    Progress progress(int64_t(sources.size()), "translate");
    const std::vector<Translation> out =
        translate_corpus(*m.model, sources, opt, [&](int64_t done) { progress.update(done); });
    progress.finish();
    write_file_atomic(output, translations_text(out, m.tgt_vocab, out_words));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!cl.common().quiet)
    fmt::print(stderr, "lava translate: {}, {} output tokens, {:.1f} s ({:.2f} sentences/s)\n", encoder.summary(),
               out_words, seconds, double(encoder.sentences()) / std::max(seconds, 1e-9));
  return 0;
}

}  // namespace lava
