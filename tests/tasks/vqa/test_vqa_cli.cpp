// The VQA CLI functions end to end on the tiny data set of tests/tasks/vqa/vqa_fixture.hpp: `lava train --task vqa`
// writes JSON epoch lines, the best model and plots, `lava eval --task vqa` reads them back, and argument errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/check.hpp"
#include "support/capture_stdout.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/non_finite_model.hpp"
#include "support/temp_dir.hpp"
#include "support/xml_check.hpp"
#include "tasks/vqa/model_file.hpp"
#include "vqa_fixture.hpp"

using namespace lava;
using vqa_test::TinyVqa;

TEST_CASE("vqa cli: train writes JSON epochs, the best model and plots; eval reads them back") {
  TinyVqa d;
  const std::string model = d.tmp.file("m.safetensors"), plots = d.tmp.file("plots");
  const std::string data[] = {"--features", d.features, "--questions", d.questions};
  CaptureStdout cap(d.tmp.file("stdout"));
  const int trained = run(cmd_train, {"train", "--task", "vqa", data[0], data[1], data[2], data[3], "--attn",
                                          "var-enum", "--epochs", "2", "--batch-size", "8", "--hidden-size", "8",
                                          "--mlp-size", "8", "--attn-size", "4", "--emb-size", "4", "--save", model,
                                          "--plot", plots, "--format", "json", "-q"});
  const int evaluated = run(cmd_eval, {"eval", "--task", "vqa", data[0], data[1], data[2], data[3], "--model",
                                           model, "--format", "json", "-q"});
  const std::vector<JsonValue> rows = json_lines(cap.finish());
  CHECK(trained == 0);
  CHECK(evaluated == 0);
  REQUIRE(rows.size() == 3 + 2 + 1 + 1);  // 2 epochs + done; 2 question types, the single-region subset, the totals
  CHECK(rows[0].at("event").str() == "epoch");
  CHECK(rows[2].at("event").str() == "done");
  // The fixture's types "even" and "odd" have one region per question: both single-region, and so the subset is
  // every question, with the totals' figures.
  for (int i : {3, 4}) {
    CHECK(rows[size_t(i)].at("event").str() == "qtype");
    CHECK(rows[size_t(i)].at("subset").str() == "single_region");
    for (const char* key : {"questions", "nll", "accuracy", "elbo", "kl", "kl_gap", "entropy"})
      CHECK_MESSAGE(rows[size_t(i)].at(key).is_number(), key);
  }
  CHECK(rows[3].at("qtype").str() == "even");
  const JsonValue& subset = rows[5];
  CHECK(subset.at("event").str() == "subset");
  CHECK(subset.at("qtype").str() == "even+odd");
  CHECK(subset.at("questions").number() == rows[3].at("questions").number() + rows[4].at("questions").number());
  CHECK(subset.at("nll").number() == doctest::Approx(rows.back().at("nll").number()).epsilon(1e-12));
  const JsonValue& e = rows.back();
  CHECK_FALSE(e.contains("event"));
  for (const char* key : {"nll", "accuracy", "elbo", "kl", "kl_gap", "entropy", "region_acc_prior",
                          "region_acc_posterior", "vqa_score", "kl_posterior"})
    CHECK_MESSAGE(e.at(key).is_number(), key);
  CHECK(e.at("unseen").number() == 1);
  CHECK(std::abs(e.at("kl_gap").number() - e.at("kl_posterior").number()) < 1e-4);
  for (const char* f : {"learning-curves.svg", "accuracy.svg", "question-1.svg"})
    CHECK_MESSAGE(xml_problem(slurp(plots + "/" + f)) == "", f);
  // The CLI's own argument errors.
  CHECK_THROWS_AS(run(cmd_train, {"train", "--task", "vqa2", data[0], data[1], data[2], data[3]}), UsageError);
  CHECK_THROWS_AS(run(cmd_eval, {"eval", "--task", "vqa", "--model", model}), UsageError);
  const std::string nowhere = d.tmp.file("nowhere");
  check_input_error([&] { run(cmd_eval, {"eval", "--task", "vqa", "--data", nowhere, "--model", model}); }, nowhere);
  // A NaN or infinite weight is refused at load, naming the tensor (evaluated, it would give accuracy 0 and exit 0).
  const std::string bad = d.tmp.file("nan.safetensors");
  for (float v : {std::nanf(""), -HUGE_VALF}) {
    const std::string tensor = write_non_finite_copy(model, bad, v);
    check_input_error([&] { (void)load_vqa(bad); }, bad, "parameter \"" + tensor + "\" holds a non-finite value");
  }
}

TEST_CASE("vqa cli: --questions naming neither a directory nor a {split} path has the command prefix") {
  TempDir dir("q_prefix");
  const std::string feats = dir.file("f.npy");
  const CliResult r = run_lava("train --task vqa --features " + feats + " --questions " + dir.file("q.tsv"));
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.starts_with("lava train: --questions"));
}
