// `lava eval` from the command line: the JSON row carries every figure (K-max's infinite bounds as null), --limit
// (with --gold-align too) and --length-buckets do what they say, and a bad model file (missing, foreign, truncated,
// with a vocabulary that does not fit its tables) is one stderr line naming the file and a non-zero exit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/json.hpp"
#include "data/synth_task.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_nmt.hpp"
#include "tasks/nmt/model_file.hpp"

using namespace lava;

namespace {

std::vector<JsonValue> json_lines(const std::string& out) {
  std::vector<JsonValue> rows;
  size_t begin = 0;
  for (size_t end; (end = out.find('\n', begin)) != std::string::npos; begin = end + 1)
    rows.push_back(parse_json(out.substr(begin, end - begin), "stdout"));
  return rows;
}

}  // namespace

TEST_CASE("eval cli: the JSON row has every figure; --kmax, --limit and --length-buckets") {
  TinyNmt f;
  CliResult r = run_lava(f.eval(f.model_path));
  REQUIRE(r.code == 0);
  std::vector<JsonValue> rows = json_lines(r.out);
  REQUIRE(rows.size() == 1);
  for (const char* key : {"nll", "ppl", "elbo", "kl", "kl_gap", "kl_posterior", "entropy", "accuracy", "tokens"})
    CHECK(rows[0].contains(key));
  const double all_tokens = rows[0].at("tokens").number();
  double expected = 0;
  for (const SentencePair& p : f.corpus.test.pairs) expected += double(p.tgt.size() + 1);  // words and </s>
  CHECK(all_tokens == expected);
  const double accuracy = rows[0].at("accuracy").number();
  CHECK(accuracy >= 0);
  CHECK(accuracy <= 1);
  CHECK(std::abs(rows[0].at("kl_gap").number() - rows[0].at("kl_posterior").number()) < 1e-4);

  // K-max 1 cuts every position but one from the prior, and var-enum's q (a softmax) keeps mass on them: log p_K =
  // −∞ there, so the ELBO and the KLs are infinite, null in the JSON row, with q's mass on the cut positions. No
  // token is left to measure the identity log p − ELBO = KL(q ‖ posterior) on, so identity_error is null too.
  r = run_lava(f.eval(f.model_path, "--kmax 1"));
  REQUIRE(r.code == 0);
  const JsonValue kmax1 = json_lines(r.out).at(0);
  CHECK(std::isfinite(kmax1.at("nll").number()));
  for (const char* key : {"elbo", "kl", "kl_gap", "kl_posterior", "identity_error"}) {
    CAPTURE(key);
    CHECK(kmax1.at(key).is_null());
  }
  CHECK(kmax1.at("q_mass_cut").number() > 0);
  CHECK(kmax1.at("q_mass_cut").number() < 1);
  CHECK(!rows[0].contains("q_mass_cut"));  // only a K-max row has it

  r = run_lava(f.eval(f.model_path, "--limit 5"));
  REQUIRE(r.code == 0);
  rows = json_lines(r.out);
  expected = 0;
  for (int k = 0; k < 5; ++k) expected += double(f.corpus.test.pairs[size_t(k)].tgt.size() + 1);
  CHECK(rows.back().at("tokens").number() == expected);

  r = run_lava(f.eval(f.model_path, "--bleu --beam 2 --length-buckets 5,8"));
  REQUIRE(r.code == 0);
  rows = json_lines(r.out);
  REQUIRE(rows.size() == 4);  // [0,5], [6,8], [9,∞) and the main row
  double sentences = 0;
  for (int k = 0; k < 3; ++k) {
    CHECK(rows[size_t(k)].at("event").str() == "bleu_bucket");
    sentences += rows[size_t(k)].at("sentences").number();
  }
  CHECK(sentences == double(f.corpus.test.pairs.size()));
  CHECK(rows[3].contains("bleu"));

  // --gold-align: the synthetic task's gold alignments give an AER for the prior, the posterior and q.
  r = run_lava(f.eval(f.model_path, "--gold-align " + f.corpus_dir + "/test.align"));
  REQUIRE(r.code == 0);
  rows = json_lines(r.out);
  for (const char* key : {"aer_prior", "aer_posterior", "aer_q"}) {
    CAPTURE(key);
    const double aer = rows.back().at(key).number();
    CHECK(aer >= 0);
    CHECK(aer <= 1);
  }
  r = run_lava(f.eval(f.model_path, "--gold-align " + f.corpus_dir + "/valid.align"));  // another split's gold
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("valid.align") != std::string::npos);
  // --limit 3 scores the first 3 lines' alignments: the same figures as the whole of a split cut to those lines.
  r = run_lava(f.eval(f.model_path, "--limit 3 --gold-align " + f.corpus_dir + "/test.align"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const JsonValue limited = json_lines(r.out).back();
  const std::string cut_dir = f.tmp.file("cut");
  std::filesystem::create_directories(cut_dir);
  for (const char* name : {"test.de", "test.en", "test.align"}) {
    const std::string text = read_file(f.corpus_dir + "/" + name);
    size_t end = 0;
    for (int line = 0; line < 3; ++line) end = text.find('\n', end) + 1;
    write_text(cut_dir + "/" + name, text.substr(0, end));
  }
  r = run_lava("eval -q --format json --split test --model " + f.model_path + " --data " + cut_dir +
               " --gold-align " + cut_dir + "/test.align");
  REQUIRE(r.code == 0);
  const JsonValue cut = json_lines(r.out).back();
  for (const char* key : {"aer_prior", "aer_posterior", "aer_q"}) {
    CAPTURE(key);
    CHECK(limited.at(key).number() == cut.at(key).number());
  }
  CHECK(limited.at("aer_prior").number() != rows.back().at("aer_prior").number());  // not the whole split's

  r = run_lava(f.eval(f.model_path, "--length-buckets 5,8"));
  CHECK(r.code == 2);
  CHECK(r.err.find("--bleu") != std::string::npos);
  r = run_lava(f.eval(f.model_path, "--bleu --length-buckets 8,5"));
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
}

TEST_CASE("eval cli: a missing, foreign, truncated or vocabulary-mismatched model file is one line and exit 1") {
  TinyNmt f;
  const std::string model = read_file(f.model_path);
  const std::string bad = f.tmp.file("bad.safetensors");
  auto expect_error = [&](const std::string& what) {
    CAPTURE(what);
    const CliResult r = run_lava(f.eval(bad));
    CHECK(r.code == 1);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(bad) != std::string::npos);
    CHECK(r.out.empty());
  };
  expect_error("missing");
  write_text(bad, "de en\nthis is not a model\n");
  expect_error("foreign text file");
  for (size_t keep : {size_t(0), size_t(7), model.size() / 2, model.size() - 1}) {
    write_text(bad, model.substr(0, keep));
    expect_error("truncated to " + std::to_string(keep) + " bytes");
  }
  // The same parameters with a source vocabulary of one word more than the embedding table has rows.
  LoadedNmt m = load_nmt(f.model_path);
  TokenCounter counts;
  for (int32_t id = Vocab::kNumSpecial; id < m.src_vocab.size(); ++id) counts.add(m.src_vocab.token(id), 2);
  counts.add("zusaetzlich", 1);
  const Vocab bigger = Vocab::build(counts, VocabOptions{});
  REQUIRE(bigger.size() == m.src_vocab.size() + 1);
  save_nmt(bad, *m.model, bigger, m.tgt_vocab, {});
  expect_error("vocabulary mismatch");
}
