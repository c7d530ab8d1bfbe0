// Captioner training through the shared loop: the same bits with 1 and 2 threads, and a run stopped and resumed
// ends with the uninterrupted run's bits (sat-hard, whose moving-average baseline rides in the parameters).
#include <doctest/doctest.h>
#include <omp.h>

#include <filesystem>
#include <string>

#include "core/atomic_file.hpp"
#include "nn/safetensors.hpp"
#include "report/progress.hpp"
#include "support/capture_stdout.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_scenes.hpp"
#include "tasks/caption/trainer.hpp"
#include "train/resume_state.hpp"

using namespace lava;

namespace {

CaptionTrainOptions tiny_options(const std::string& data, const std::string& save, const std::string& attn) {
  CaptionTrainOptions o;
  o.data_dir = data;
  REQUIRE(caption_choice_options().front().set(o.model, attn));  // --attn, as lava train reads it
  o.model.emb = 6, o.model.hidden = 8, o.model.annotation = 8, o.model.attn_size = 4;
  o.objective.alpha_reg = 0.1f;
  o.objective.sat.entropy = 0.01f;
  o.loop.batch_size = 8, o.loop.epochs = 3, o.loop.seed = 4, o.loop.save = save;
  o.loop.format = OutputFormat::json;
  return o;
}

TrainResult train_quietly(const CaptionTrainOptions& o, const std::string& out) {
  CaptureStdout capture(out);
  Progress::set_quiet(true);
  TrainResult s = train_caption(o);
  Progress::set_quiet(false);
  capture.finish();
  return s;
}

}  // namespace

TEST_CASE("caption train: 1 and 2 threads give the same bits") {
  TempDir dir("caption_threads");
  const std::string data = tiny_scenes(dir);
  const int threads = omp_get_max_threads();
  for (const char* attn : {"sat-hard", "var-enum"}) {
    CAPTURE(attn);
    omp_set_num_threads(1);
    const TrainResult one = train_quietly(tiny_options(data, dir.file("one.st"), attn), dir.file("one.out"));
    omp_set_num_threads(2);
    const TrainResult two = train_quietly(tiny_options(data, dir.file("two.st"), attn), dir.file("two.out"));
    CHECK(one.loop.steps == two.loop.steps);
    CHECK(figure(one.loop.kept.figures, "nll") == figure(two.loop.kept.figures, "nll"));
    CHECK(std::isfinite(figure(one.loop.kept.figures, "nll")));
    CHECK(read_file(dir.file("one.st")) == read_file(dir.file("two.st")));
  }
  omp_set_num_threads(threads);
}

TEST_CASE("caption train: a run stopped and resumed ends with the uninterrupted run's bits (sat-hard)") {
  TempDir dir("caption_resume");
  const std::string data = tiny_scenes(dir);
  const std::string full = dir.file("full.st"), part = dir.file("part.st");
  CaptionTrainOptions o = tiny_options(data, full, "sat-hard");
  o.loop.max_steps = 7;  // two epochs of 3 batches and one step of the third
  const TrainResult s_full = train_quietly(o, dir.file("full.out"));
  CaptionTrainOptions p = tiny_options(data, part, "sat-hard");
  p.loop.max_steps = 4;
  train_quietly(p, dir.file("part1.out"));
  p.loop.max_steps = 7, p.loop.resume = resume_state_path(part);
  const TrainResult s_part = train_quietly(p, dir.file("part2.out"));
  CHECK(s_full.loop.steps == 7);
  CHECK(s_part.loop.steps == 7);
  CHECK(figure(s_part.loop.kept.figures, "nll") == figure(s_full.loop.kept.figures, "nll"));
  CHECK(read_file(full) == read_file(part));
  // The resume states: every tensor (weights, Adam moments, the baseline) bit for bit.
  const SafetensorsFile a = load_safetensors(resume_state_path(full)), b = load_safetensors(resume_state_path(part));
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    CAPTURE(a.tensors[i].name);
    CHECK(a.tensors[i].name == b.tensors[i].name);
    CHECK(a.tensors[i].data == b.tensors[i].data);
  }
  CHECK(a.metadata.at("state.step") == b.metadata.at("state.step"));
}
