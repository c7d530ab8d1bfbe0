// lava train --task nmt: stopping and resuming. A run stopped mid-epoch (by --max-steps) and resumed gives the
// uninterrupted run's bits; the options of the resumed run are checked; a damaged state is one InputError; a NaN
// step leaves the last state alone; --plot writes the pictures. Stops by a signal: tests/train/test_resume_signal.cpp.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/json.hpp"
#include "nn/safetensors.hpp"
#include "report/progress.hpp"
#include "resume_fixture.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/epoch_lines.hpp"
#include "support/temp_dir.hpp"
#include "support/xml_check.hpp"
#include "tasks/nmt/trainer.hpp"
#include "train/resume_state.hpp"

using namespace lava;

namespace {

using resume_test::check_same_state;
using resume_test::corpus_dir;
using resume_test::tiny_flags;

NmtTrainOptions tiny_options(const std::string& save) {
  NmtTrainOptions o;
  o.corpus.dir = corpus_dir();
  o.model.attn =
      parse_attn_variant("var-sample", "nmt");  // sampling and dropout: both need the counter-based streams to line up
  o.model.emb = 8, o.model.hidden = 12, o.model.attn_size = 6, o.model.inf_hidden = 6, o.model.dropout = 0.3f;
  o.loop.epochs = 3, o.loop.batch_size = 8, o.loop.lr = 0.02, o.loop.seed = 7;
  o.loop.save = save;
  o.loop.format = OutputFormat::json;
  return o;
}

// Runs f with stdout (the trainer's JSON lines) going to `path` and stderr to `path`.err, progress lines off.
template <class F>
void capture_stdout(const std::string& path, F&& f) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = ::dup(1), saved_err = ::dup(2);
  const int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = ::open((path + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE((saved_out >= 0 && saved_err >= 0 && out >= 0 && err >= 0));
  ::dup2(out, 1), ::dup2(err, 2);
  ::close(out), ::close(err);
  Progress::set_quiet(true);
  auto restore = [&] {
    std::fflush(stdout);
    std::fflush(stderr);
    ::dup2(saved_out, 1), ::dup2(saved_err, 2);
    ::close(saved_out), ::close(saved_err);
    Progress::set_quiet(false);
  };
  try {
    f();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

}  // namespace

TEST_CASE("resume: a run stopped mid-epoch twice and resumed ends with the uninterrupted run's bits") {
  TempDir tmp("resume");
  const std::string full = tmp.file("full.st"), part = tmp.file("part.st");
  // Uninterrupted: 10 steps = epochs 1 and 2 (4 batches each) and half of epoch 3.
  NmtTrainOptions o = tiny_options(full);
  o.loop.max_steps = 10;
  TrainResult s_full;
  capture_stdout(tmp.file("full.out"), [&] { s_full = train_nmt(o); });
  // Stopped after step 3 (inside epoch 1), resumed to step 6 (inside epoch 2), resumed to step 10.
  std::vector<std::string> chained;
  TrainResult s_part;
  for (int64_t stop : {3, 6, 10}) {
    NmtTrainOptions p = tiny_options(part);
    p.loop.max_steps = stop;
    if (stop > 3) p.loop.resume = resume_state_path(part);
    capture_stdout(tmp.file("part.out"), [&] { s_part = train_nmt(p); });
    // A stop's own partial line is not in the full run; the last stop's is, as the full run stops there too.
    for (const std::string& l : epoch_lines(slurp(tmp.file("part.out")), stop == 10)) chained.push_back(l);
  }
  CHECK(s_full.loop.steps == 10);
  CHECK(s_part.loop.steps == 10);
  CHECK(s_part.loop.epochs == s_full.loop.epochs);
  CHECK(figure(s_part.loop.kept.figures, "elbo") == figure(s_full.loop.kept.figures, "elbo"));
  const std::vector<std::string> full_lines = epoch_lines(slurp(tmp.file("full.out")), true);
  CHECK(full_lines.size() == 3);
  CHECK(chained == full_lines);
  CHECK(slurp(full) == slurp(part));  // the best-model files, byte for byte
  check_same_state(resume_state_path(full), resume_state_path(part));
}

TEST_CASE("resume: the training's CPU time adds up over sessions; a state that did not count it leaves it unknown") {
  TempDir tmp("resume_cpu");
  const std::string model = tmp.file("m.st"), state = resume_state_path(model);
  TrainResult r;
  NmtTrainOptions o = tiny_options(model);
  o.loop.max_steps = 4;
  capture_stdout(tmp.file("1.out"), [&] { r = train_nmt(o); });
  const double first = r.loop.cpu_seconds;
  CHECK(first > 0);
  // The state is written before the stop's own validation, which is no part of the trajectory.
  const double saved = std::stod(load_safetensors(state).metadata.at("state.cpu_seconds"));
  CHECK(saved > 0);
  CHECK(saved <= first);
  o.loop.max_steps = 8, o.loop.resume = state;
  capture_stdout(tmp.file("2.out"), [&] { r = train_nmt(o); });
  CHECK(r.loop.cpu_seconds >= saved);
  CHECK(r.loop.cpu_seconds < first + 3600);
  // Each validation's line has the CPU time as it stood then: from the state's on, rising, up to the done line's.
  double before = saved;
  for (const std::string& line : lines_of(slurp(tmp.file("2.out")))) {
    const JsonValue v = parse_json(line, "2.out");
    if (v.at("event").str() != "epoch") continue;
    CAPTURE(line);
    CHECK(v.at("cpu_seconds").number() >= before);
    CHECK(v.at("cpu_seconds").number() <= r.loop.cpu_seconds);
    before = v.at("cpu_seconds").number();
  }
  CHECK(before > saved);
  // A state written before LAVA recorded CPU time (no state.cpu_seconds): the run's total is unknown, not this
  // session's alone.
  SafetensorsFile old = load_safetensors(state);
  REQUIRE(old.metadata.erase("state.cpu_seconds") == 1);
  save_safetensors(state, old.tensors, old.metadata);
  o.loop.max_steps = 10;
  capture_stdout(tmp.file("3.out"), [&] { r = train_nmt(o); });
  CHECK(r.loop.steps == 10);
  CHECK(std::isnan(r.loop.cpu_seconds));
  CHECK(load_safetensors(state).metadata.count("state.cpu_seconds") == 0);
  CHECK(slurp(tmp.file("3.out")).find("\"event\":\"epoch\"") != std::string::npos);
  for (const std::string& line : lines_of(slurp(tmp.file("3.out"))))
    CHECK_MESSAGE(parse_json(line, "3.out").at("cpu_seconds").is_null(), line);
}

TEST_CASE("resume: the best-model file is only replaced by a better model, never by a resumed or failed run") {
  // Through the binary, so that the same test can check any build of it. A stop inside epoch 2
  // validates its model, which beats epoch 1 and becomes the best-model file. Resuming must not put the older
  // epoch-1 model back: not when the resumed run fails (here: its --plot directory cannot be made), and not at any
  // later point unless a validation beats the stop's figure.
  TempDir tmp("resume_best");
  const std::string model = tmp.file("m.st"), state = resume_state_path(model);
  const std::string flags = tiny_flags() + " --epochs 3 --save " + model;
  const CliResult first = run_lava("train " + flags + " --max-steps 6");  // epoch 1 (4 batches) and 2 of epoch 2
  REQUIRE(first.code == 0);
  std::vector<std::string> lines = epoch_lines(first.out, true);
  REQUIRE(lines.size() == 2);
  REQUIRE(is_partial(lines[1]));
  REQUIRE(lines[1].find("\"best\":true") != std::string::npos);  // the stop's model beat epoch 1
  const std::string stop_model = slurp(model);

  // A resumed run that fails before training leaves the file alone.
  write_text(tmp.file("plain"), "x");
  const CliResult failing = run_lava("train " + flags + " --resume " + state + " --plot " + tmp.file("plain/plots"));
  CHECK(failing.code == 1);
  CHECK(slurp(model) == stop_model);

  // Resumed to the end: the file holds the model of the best validation any session printed.
  const CliResult last = run_lava("train " + flags + " --resume " + state);
  REQUIRE(last.code == 0);
  for (const std::string& l : epoch_lines(last.out, true)) lines.push_back(l);
  double best_elbo = -INFINITY;
  std::string best_ppl;
  const std::regex elbo("\"valid_elbo\":([^,}]*)"), ppl("\"valid_ppl\":([^,}]*)");
  for (const std::string& l : lines) {
    std::smatch me, mp;
    REQUIRE(std::regex_search(l, me, elbo));
    REQUIRE(std::regex_search(l, mp, ppl));
    if (std::stod(me[1]) > best_elbo) best_elbo = std::stod(me[1]), best_ppl = mp[1];
  }
  CHECK(std::stod(load_safetensors(model).metadata.at("valid_ppl")) == std::stod(best_ppl));
}

TEST_CASE("resume: options that shape training must match the saved run") {
  TempDir tmp("resume_opts");
  NmtTrainOptions o = tiny_options(tmp.file("m.st"));
  o.loop.max_steps = 2;
  capture_stdout(tmp.file("out"), [&] { train_nmt(o); });
  auto refused = [&](NmtTrainOptions p, const std::string& option) {
    p.loop.resume = resume_state_path(o.loop.save);
    p.loop.max_steps = 4;  // stopping criteria may change
    try {
      capture_stdout(tmp.file("out"), [&] { train_nmt(p); });
      FAIL("resumed despite a different " << option);
    } catch (const UsageError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find(option) != std::string::npos);
      CHECK(msg.find(p.loop.resume) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  };
  NmtTrainOptions p = o;
  p.loop.batch_size = 4;
  refused(p, "--batch-size");
  p = o, p.model.hidden = 16;
  refused(p, "--hidden-size");
  p = o, p.model.attn = parse_attn_variant("var-enum", "nmt");
  refused(p, "--attn");
  p = o, p.loop.seed = 8;
  refused(p, "--seed");
  p = o, p.corpus.max_len = 4;  // drops pairs
  refused(p, "--max-len");

  // The command line: one line, exit 2.
  const CliResult r = run_lava("train " + tiny_flags() + " --hidden-size 16 --resume " + resume_state_path(o.loop.save));
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("--hidden-size") != std::string::npos);
}

TEST_CASE("resume: a damaged resume state is one InputError naming the file") {
  TempDir tmp("resume_bad");
  NmtTrainOptions o = tiny_options(tmp.file("m.st"));
  o.loop.max_steps = 1;
  capture_stdout(tmp.file("out"), [&] { train_nmt(o); });
  const std::string good = slurp(resume_state_path(o.loop.save));
  const std::string bad = tmp.file("bad.st.resume");
  NmtTrainOptions p = tiny_options(tmp.file("bad.st"));
  p.loop.resume = bad;
  for (size_t keep : {size_t(0), size_t(5), good.size() / 2, good.size() - 1}) {
    write_text(bad, good.substr(0, keep));
    CAPTURE(keep);
    check_input_error([&] { train_nmt(p); }, bad);
  }
  // A model file is not a resume state.
  check_input_error([&] { p.loop.resume = o.loop.save, train_nmt(p); }, o.loop.save, "not a LAVA resume state");

  write_text(bad, good.substr(0, good.size() / 2));
  const CliResult r = run_lava("train " + tiny_flags() + " --resume " + bad);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(bad) != std::string::npos);
}

TEST_CASE("resume: a step with a non-finite loss writes no state") {
  TempDir tmp("resume_nan");
  NmtTrainOptions o = tiny_options(tmp.file("m.st"));
  o.loop.max_steps = 1;
  capture_stdout(tmp.file("out"), [&] { train_nmt(o); });
  // Parameters of ±3e38: finite, so the state loads, but the first step's sums meet +inf and −inf.
  const std::string state = resume_state_path(o.loop.save);
  SafetensorsFile f = load_safetensors(state);
  for (NamedTensor& t : f.tensors)
    if (t.name.rfind("param.", 0) == 0)
      for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = i % 2 ? 3e38f : -3e38f;
  save_safetensors(state, f.tensors, f.metadata);
  const std::string before = slurp(state), model_before = slurp(o.loop.save);
  o.loop.max_steps = 5;
  o.loop.resume = state;
  TrainResult s;
  capture_stdout(tmp.file("out"), [&] { s = train_nmt(o); });
  CHECK(s.loop.stopped_on_nan);
  CHECK(s.loop.steps == 1);
  CHECK(slurp(tmp.file("out.err")).find("became nan at step 1") != std::string::npos);
  CHECK(slurp(state) == before);
  CHECK(slurp(o.loop.save) == model_before);
}

TEST_CASE("resume: --plot writes learning curves and attention heatmaps with the words") {
  TempDir tmp("resume_plot");
  NmtTrainOptions o = tiny_options(tmp.file("m.st"));
  o.plot_dir = tmp.file("plots/sub");  // created if missing
  o.loop.epochs = 2;
  capture_stdout(tmp.file("out"), [&] { train_nmt(o); });
  const std::string valid_src = slurp(corpus_dir() + "/valid.de"), valid_tgt = slurp(corpus_dir() + "/valid.en");
  const std::string first_src = valid_src.substr(0, valid_src.find(' '));
  const std::string first_tgt = valid_tgt.substr(0, valid_tgt.find(' '));
  for (const char* name : {"learning-curves.svg", "kl.svg"}) {
    const std::string svg = slurp(o.plot_dir + "/" + name);
    CAPTURE(name);
    CHECK(xml_problem(svg) == "");
    CHECK(svg.find("valid") != std::string::npos);
  }
  for (int k = 1; k <= 4; ++k) {
    for (const char* suffix : {"", "-q"}) {
      const std::string svg = slurp(fmt::format("{}/attention-{}{}.svg", o.plot_dir, k, suffix));
      CAPTURE(k);
      CHECK(xml_problem(svg) == "");
      CHECK(svg.find("&lt;eos&gt;") != std::string::npos);
      CHECK(svg.find("posterior") != std::string::npos);
      if (k == 1) CHECK(svg.find(first_src) != std::string::npos);
      if (k == 1) CHECK(svg.find(first_tgt) != std::string::npos);
    }
  }
  CHECK(!std::filesystem::exists(o.plot_dir + "/attention-5.svg"));
  // Without q there is no q picture.
  o.model.attn = parse_attn_variant("soft", "nmt"), o.plot_dir = tmp.file("soft"), o.loop.epochs = 1;
  capture_stdout(tmp.file("out"), [&] { train_nmt(o); });
  CHECK(std::filesystem::exists(o.plot_dir + "/attention-1.svg"));
  CHECK(!std::filesystem::exists(o.plot_dir + "/attention-1-q.svg"));
}
