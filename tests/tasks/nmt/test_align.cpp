// Word alignments from a translation model (tasks/nmt/alignments.hpp, lava align): one link per real target word
// inside the sentence, corpus order whatever the batching, the argmax of the right distribution, skipped lines kept
// as empty lines, gold files checked line by line, and the command line's output and errors.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "data/synth_task.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "tasks/nmt/alignments.hpp"
#include "tasks/nmt/model_file.hpp"

using namespace lava;

namespace {

// A tiny synthetic corpus whose test split has 16 pairs of 3..7 source words, plus a copy in which line 4 of the
// test split is an empty pair (the reader skips it) and the gold has an empty line there.
struct AlignFixture {
  TempDir dir{"align"};
  std::string corpus = dir.file("synth"), holed = dir.file("holed");
  ParallelCorpus data;
  AlignFixture() {
    SynthOptions o;
    o.out_dir = corpus;
    o.train = 64, o.valid = 8, o.test = 16, o.min_len = 3, o.max_len = 7, o.vocab = 30, o.quiet = true;
    build_synth_task(o);
    CorpusOptions co;
    co.dir = corpus;
    data = load_parallel_corpus(co, VocabOptions{}, VocabOptions{});
    std::filesystem::create_directories(holed);
    for (const char* name : {"train.de", "train.en", "valid.de", "valid.en"})
      std::filesystem::copy_file(corpus + "/" + name, holed + "/" + name);
    for (const char* ext : {"de", "en", "align"}) {
      std::string text = slurp(corpus + "/test." + ext);
      size_t third = 0;
      for (int k = 0; k < 3; ++k) third = text.find('\n', third) + 1;
      write_text(holed + "/test." + ext, text.substr(0, third) + "\n" + text.substr(third));
    }
  }
  Seq2Seq model(AttnVariant v) const {
    Seq2SeqConfig cfg;
    cfg.attn = v;
    cfg.src_vocab = data.src_vocab.size(), cfg.tgt_vocab = data.tgt_vocab.size();
    cfg.emb = 8, cfg.hidden = 12, cfg.attn_size = 6, cfg.inf_hidden = 6, cfg.dropout = 0.f;
    Seq2Seq m(cfg);
    m.ps.init_uniform(0.5f, 7);  // a random model with peaked attention: argmax ties are unlikely
    return m;
  }
  ParallelSplit read_test(const std::string& dir_path) const {
    CorpusOptions co;
    co.dir = dir_path;
    return read_parallel_split(co, CorpusSplit::test, data.src_vocab, data.tgt_vocab);
  }
};

AlignFixture& fixture() {
  static AlignFixture f;
  return f;
}

}  // namespace

TEST_CASE("align: one in-range link per real target word, in corpus order whatever the batch size") {
  const AlignFixture& f = fixture();
  Seq2Seq model = f.model(parse_attn_variant("var-enum", "nmt"));
  const ParallelSplit& test = f.data.test;
  for (AlignWhich which : {AlignWhich::prior, AlignWhich::posterior, AlignWhich::q}) {
    CAPTURE(align_which_name(which));
    const auto one = predict_alignments(model, test, which, 1);
    const auto seven = predict_alignments(model, test, which, 7);
    REQUIRE(one.size() == test.pairs.size());
    CHECK(one == seven);  // batch rows mapped back to their pairs, padding changes nothing
    for (size_t k = 0; k < one.size(); ++k) {
      const SentencePair& p = test.pairs[k];
      std::vector<int> per_target(p.tgt.size(), 0);
      for (const AlignmentLink& l : one[k]) {
        REQUIRE(l.src >= 0);
        REQUIRE(l.src < int(p.src.size()));
        REQUIRE(l.tgt >= 0);
        REQUIRE(l.tgt < int(p.tgt.size()));  // no link for </s>
        ++per_target[size_t(l.tgt)];
      }
      CHECK(std::all_of(per_target.begin(), per_target.end(), [](int n) { return n == 1; }));
    }
  }
  // The three distributions are different objects: a random model does not align the same way under all of them.
  CHECK(predict_alignments(model, test, AlignWhich::prior, 16) !=
        predict_alignments(model, test, AlignWhich::posterior, 16));
}

TEST_CASE("align: the posterior argmax is the argmax of attention_maps for that sentence") {
  const AlignFixture& f = fixture();
  Seq2Seq model = f.model(parse_attn_variant("marginal", "nmt"));
  const ParallelSplit& test = f.data.test;
  const auto all = predict_alignments(model, test, AlignWhich::posterior, 5);
  for (int k : {0, 9}) {
    // The sentence alone in its batch, and the argmax taken here by hand: row t of the (1, T, S) map is target word t.
    const std::vector<int> idx = {k};
    const Batch batch = make_batch(test.pairs, idx);
    Tape<float> tape;
    Ctx c{tape, model.ps, false, CounterRng(1, 1), 0.f};
    const AttentionMaps maps = model.attention_maps(c, batch);
    const SentencePair& p = test.pairs[size_t(k)];
    REQUIRE(maps.S == int(p.src.size()));
    REQUIRE(maps.T == int(p.tgt.size()) + 1);
    SentenceAlignment expected;
    for (int t = 0; t < int(p.tgt.size()); ++t) {
      const float* row = maps.posterior.data() + size_t(t) * size_t(maps.S);
      double sum = 0;
      for (int i = 0; i < maps.S; ++i) sum += row[i];
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
      expected.push_back({int(std::max_element(row, row + maps.S) - row), t, true});
    }
    normalize_alignment(expected);
    CAPTURE(k);
    CHECK(all[size_t(k)] == expected);
  }
}

TEST_CASE("align: ties go to the lowest source position") {
  // All parameters zero: every memory vector is zero, so prior, posterior and q are exactly uniform.
  const AlignFixture& f = fixture();
  Seq2Seq model = f.model(parse_attn_variant("var-enum", "nmt"));
  model.ps.init_uniform(0.f, 1);
  for (AlignWhich which : {AlignWhich::prior, AlignWhich::posterior, AlignWhich::q}) {
    const auto links = predict_alignments(model, f.data.test, which, 8);
    for (const SentenceAlignment& sentence : links)
      for (const AlignmentLink& l : sentence) CHECK(l.src == 0);
  }
}

TEST_CASE("align: q on a model without an inference network is a usage error") {
  const AlignFixture& f = fixture();
  Seq2Seq model = f.model(parse_attn_variant("soft", "nmt"));
  CHECK_THROWS_AS(predict_alignments(model, f.data.test, AlignWhich::q, 4), UsageError);
  CHECK_FALSE(evaluate_alignments(model, f.data.test, f.corpus + "/test.align", 4).q.has_value());
  CHECK_THROWS_AS(parse_align_which("posterior "), UsageError);
}

TEST_CASE("align: skipped lines stay empty lines; gold is scored line by line and checked against the pairs") {
  const AlignFixture& f = fixture();
  Seq2Seq model = f.model(parse_attn_variant("var-enum", "nmt"));
  const ParallelSplit holed = f.read_test(f.holed);
  REQUIRE(holed.stats.lines == 17);
  REQUIRE(holed.stats.empty_skipped == 1);
  const auto per_pair = predict_alignments(model, holed, AlignWhich::posterior, 4);
  const auto lines = alignments_by_line(holed, per_pair);
  REQUIRE(lines.size() == 17);
  CHECK(lines[3].empty());
  CHECK(lines[4] == per_pair[3]);
  CHECK(lines[2] == per_pair[2]);

  // The model's own posterior alignment as gold: AER 0 for the posterior, not for the prior.
  TempDir tmp("align_gold");
  write_alignments(tmp.file("self.align"), lines);
  const AlignmentEvaluation self = evaluate_alignments(model, holed, tmp.file("self.align"), 3);
  CHECK(self.posterior.aer() == 0.0);
  CHECK(self.posterior.hyp == self.posterior.sure);
  CHECK(self.prior.aer() > 0.0);
  REQUIRE(self.q.has_value());
  // The synthetic gold of the same corpus reads (its empty line 4 included) and a random model is far from it.
  const AlignmentEvaluation synth = evaluate_alignments(model, holed, f.holed + "/test.align", 3);
  CHECK(synth.posterior.aer() > 0.2);
  CHECK(synth.posterior.sure > 0);

  // Gold of the unholed corpus: one line short, and its line 4 holds links for a pair the reader skipped.
  check_input_error([&] { read_gold_alignments(holed, f.corpus + "/test.align"); }, f.corpus + "/test.align:4",
                    "out of range");
  std::string extra = slurp(f.holed + "/test.align") + "0-0\n";
  write_text(tmp.file("long.align"), extra);
  check_input_error([&] { evaluate_alignments(model, holed, tmp.file("long.align"), 3); },
                    tmp.file("long.align") + ":18", "more lines");
}

TEST_CASE("align: lava align writes Pharaoh lines, scores against gold, refuses q for soft and bad gold") {
  const AlignFixture& f = fixture();
  TempDir tmp("align_cli");
  const std::string soft = tmp.file("soft.st"), venum = tmp.file("venum.st");
  save_nmt(soft, f.model(parse_attn_variant("soft", "nmt")), f.data.src_vocab, f.data.tgt_vocab, {});
  save_nmt(venum, f.model(parse_attn_variant("var-enum", "nmt")), f.data.src_vocab, f.data.tgt_vocab, {});
  const std::string out = tmp.file("out.align");

  CliResult r = run_lava("align --model " + venum + " --data " + f.holed + " --which q --out " + out);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  const std::string text = slurp(out);
  CHECK(std::count(text.begin(), text.end(), '\n') == 17);
  CHECK(std::regex_match(text, std::regex("(((\\d+-\\d+)( \\d+-\\d+)*)?\n)+")));
  CHECK(text.find("\n\n") != std::string::npos);  // the skipped pair's line
  CHECK(tmp.entries() == 3);                       // no temp file left behind
  // The same alignments on stdout, and what the library gives.
  r = run_lava("align --model " + venum + " --data " + f.holed + " --which q --batch-size 5 -q");
  CHECK(r.code == 0);
  CHECK(r.out == text);
  CHECK(r.err.empty());
  LoadedNmt loaded = load_nmt(venum);
  write_alignments(tmp.file("lib.align"),
                   alignments_by_line(f.read_test(f.holed),
                                      predict_alignments(*loaded.model, f.read_test(f.holed), AlignWhich::q, 8)));
  CHECK(slurp(tmp.file("lib.align")) == text);

  // Scores: one JSON line on stdout when the alignments go to --out.
  r = run_lava("align --model " + venum + " --data " + f.holed + " --gold " + f.holed +
               "/test.align --format json -q --out " + out);
  CHECK(r.code == 0);
  CHECK(r.out.find("\"aer\":") != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  r = run_lava("align --model " + venum + " --data " + f.holed + " --gold " + out + " -q --out " +
               tmp.file("again.align"));
  CHECK(r.code == 0);
  CHECK(r.err.find("0.0000") != std::string::npos);  // out holds the posterior alignments: AER 0, on stderr

  r = run_lava("align --model " + soft + " --data " + f.corpus + " --which q");
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("--which q") != std::string::npos);
  CHECK(r.out.empty());

  write_text(tmp.file("short.align"), "0-0\n");
  r = run_lava("align --model " + soft + " --data " + f.corpus + " --gold " + tmp.file("short.align"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(tmp.file("short.align") + ": has 1 lines but there are 16") != std::string::npos);
  CHECK(r.out.empty());  // checked before any alignment is written
  write_text(tmp.file("long.align"), slurp(f.corpus + "/test.align") + "0-0\n");
  r = run_lava("align --model " + soft + " --data " + f.corpus + " --gold " + tmp.file("long.align"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(tmp.file("long.align") + ":17: more lines than the 16 sentence pairs") != std::string::npos);
}
