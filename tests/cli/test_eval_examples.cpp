// The examples lava eval covers, as `lava sweep plan --estimate` counts them for each task: translation skips pairs
// with an empty side in every split and filters no split by length; seqvae reads SPLIT.LANG (the model's language
// without --lang); vqa counts questions, caption scenes; --limit caps each; a missing file is the reader's error;
// reading the line sets none of this process's settings (its thread count).
#include <doctest/doctest.h>
#include <omp.h>

#include <filesystem>

#include "cli/eval_examples.hpp"
#include "core/check.hpp"
#include "data/scenes.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_scenes.hpp"
#include "tasks/caption/data.hpp"
#include "tasks/vqa/data.hpp"

using namespace lava;

namespace {

std::vector<std::string> eval_args(const std::string& task, const std::string& rest) {
  std::vector<std::string> args = {"eval", "--task", task};
  for (size_t at = 0; at < rest.size();) {
    size_t sp = rest.find(' ', at);
    if (sp == std::string::npos) sp = rest.size();
    if (sp > at) args.push_back(rest.substr(at, sp - at));
    at = sp + 1;
  }
  return args;
}

// n tokens "w w w ...".
std::string words(int n) {
  std::string s;
  for (int k = 0; k < n; ++k) s += k ? " w" : "w";
  return s;
}

}  // namespace

TEST_CASE("eval examples: translation pairs with no empty side, no split length-filtered, --limit caps") {
  TempDir d("eval_examples_nmt");
  const std::string c = d.file("c");
  std::filesystem::create_directories(c);
  // test: 5 lines, one with an empty target (skipped), one of 90 tokens (kept: lava eval filters no length).
  write_text(c + "/test.de", "a b\n" + words(90) + "\nc\nd e\nf\n");
  write_text(c + "/test.en", "x\n" + words(90) + "\n\ny z\nw\n");
  write_text(c + "/valid.de", "a\n" + words(60) + "\nb\n");
  write_text(c + "/valid.en", "x\n" + words(60) + "\ny\n");
  CHECK(eval_examples(eval_args("nmt", "--data " + c + " --model m")) == 4);
  CHECK(eval_examples(eval_args("nmt", "--data " + c + " --split valid")) == 3);
  CHECK(eval_examples(eval_args("nmt", "--data " + c + " --limit 2")) == 2);
  CHECK(eval_examples(eval_args("nmt", "--data " + c + " --limit 100")) == 4);
  check_input_error([&] { eval_examples(eval_args("nmt", "--data " + d.file("none"))); }, d.file("none") + "/test.de",
                    "cannot open");
  // A whole synthetic corpus: every test pair.
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 50 --valid 7 --test 13 --vocab 20 -q").code == 0);
  CHECK(eval_examples(eval_args("nmt", "--data " + d.file("synth"))) == 13);
  CHECK(eval_examples(eval_args("nmt", "--data " + d.file("synth") + " --split valid --bleu --beam 10")) == 7);
}

TEST_CASE("eval examples: the evaluation's --threads is its own, not the counting process's") {
  TempDir d("eval_examples_threads");
  REQUIRE(run_lava("data synth --out " + d.file("synth") + " --train 50 --valid 7 --test 13 --vocab 20 -q").code == 0);
  const int threads = omp_get_max_threads();
  const int other = threads == 1 ? 2 : 1;
  CHECK(eval_examples(eval_args("nmt", "--data " + d.file("synth") + " --threads " + std::to_string(other))) == 13);
  CHECK(omp_get_max_threads() == threads);
}

TEST_CASE("eval examples: seqvae sentences of SPLIT.LANG with tokens, LANG from --lang") {
  TempDir d("eval_examples_seqvae");
  const std::string c = d.file("c");
  std::filesystem::create_directories(c);
  write_text(c + "/test.en", "a b\n\n" + words(80) + "\nc\n");
  write_text(c + "/test.de", "a\n");
  CHECK(eval_examples(eval_args("seqvae", "--data " + c + " --lang en")) == 3);
  CHECK(eval_examples(eval_args("seqvae", "--data " + c + " --lang de")) == 1);
  CHECK(eval_examples(eval_args("seqvae", "--data " + c + " --lang en --limit 1")) == 1);
}

TEST_CASE("eval examples: vqa questions and caption scenes of a scenes directory, as their loaders read them") {
  TempDir d("eval_examples_scenes");
  const std::string scenes = tiny_scenes(d);
  VqaDataOptions data;
  data.data_dir = scenes;
  const size_t questions = load_vqa_split(data, "test").questions.size();
  REQUIRE(questions > 2);
  CHECK(eval_examples(eval_args("vqa", "--data " + scenes)) == int64_t(questions));
  CHECK(eval_examples(eval_args("vqa", "--data " + scenes + " --limit 2")) == 2);
  CHECK(eval_examples(eval_args("caption", "--data " + scenes)) == 2);  // tiny_scenes: 2 test scenes
  CHECK(eval_examples(eval_args("caption", "--data " + scenes + " --split valid")) == 4);
  CHECK(eval_examples(eval_args("caption", "--data " + scenes + " --split valid --limit 3")) == 3);
  CHECK_THROWS_AS(eval_examples(eval_args("vqa", "")), UsageError);
}
