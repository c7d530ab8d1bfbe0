// The VQA CLI functions end to end on the tiny data set of tests/vqa_fixture.hpp: `lava train --task vqa` writes
// JSON epoch lines, the best model and plots, `lava eval --task vqa` reads them back, and argument errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "capture_stdout.hpp"
#include "check_input_error.hpp"
#include "cli/cmd_vqa.hpp"
#include "core/check.hpp"
#include "non_finite_model.hpp"
#include "tasks/vqa/model_file.hpp"
#include "vqa_fixture.hpp"

using namespace lava;
using vqa_test::TinyVqa;

TEST_CASE("vqa cli: train writes JSON epochs, the best model and plots; eval reads them back") {
  TinyVqa d;
  const std::string model = d.tmp.file("m.safetensors"), plots = d.tmp.file("plots");
  const std::string data[] = {"--features", d.features, "--questions", d.questions};
  CaptureStdout cap(d.tmp.file("stdout"));
  const int trained = run(cmd_train_vqa, {"train", "--task", "vqa", data[0], data[1], data[2], data[3], "--attn",
                                          "var-enum", "--epochs", "2", "--batch-size", "8", "--hidden-size", "8",
                                          "--mlp-size", "8", "--attn-size", "4", "--emb-size", "4", "--save", model,
                                          "--plot", plots, "--format", "json", "-q"});
  const int evaluated = run(cmd_eval_vqa, {"eval", "--task", "vqa", data[0], data[1], data[2], data[3], "--model",
                                           model, "--format", "json", "-q"});
  const std::vector<JsonValue> rows = json_lines(cap.finish());
  CHECK(trained == 0);
  CHECK(evaluated == 0);
  REQUIRE(rows.size() == 3 + 2 + 1);  // 2 epochs + done; 2 question types + the eval row
  CHECK(rows[0].at("event").str() == "epoch");
  CHECK(rows[2].at("event").str() == "done");
  CHECK(rows[3].at("event").str() == "qtype");
  const JsonValue& e = rows.back();
  CHECK_FALSE(e.contains("event"));
  for (const char* key : {"nll", "accuracy", "elbo", "kl", "kl_gap", "entropy", "region_acc_prior",
                          "region_acc_posterior", "vqa_score", "kl_posterior"})
    CHECK_MESSAGE(e.at(key).is_number(), key);
  CHECK(e.at("unseen").number() == 1);
  CHECK(std::abs(e.at("kl_gap").number() - e.at("kl_posterior").number()) < 1e-4);
  for (const char* f : {"learning-curves.svg", "accuracy.svg", "question-1.svg"})
    CHECK_MESSAGE(std::filesystem::exists(plots + "/" + f), f);
  // The CLI's own argument errors.
  CHECK_THROWS_AS(run(cmd_train_vqa, {"train", "--task", "nmt", data[0], data[1], data[2], data[3]}), UsageError);
  CHECK_THROWS_AS(run(cmd_eval_vqa, {"eval", "--task", "vqa", "--model", model}), UsageError);
  const std::string nowhere = d.tmp.file("nowhere");
  check_input_error([&] { run(cmd_eval_vqa, {"eval", "--task", "vqa", "--data", nowhere, "--model", model}); }, nowhere);
  // A NaN or infinite weight is refused at load, naming the tensor (it used to evaluate to accuracy 0, exit 0).
  const std::string bad = d.tmp.file("nan.safetensors");
  for (float v : {std::nanf(""), -HUGE_VALF}) {
    const std::string tensor = write_non_finite_copy(model, bad, v);
    check_input_error([&] { (void)load_vqa(bad); }, bad, "parameter \"" + tensor + "\" holds a non-finite value");
  }
}
