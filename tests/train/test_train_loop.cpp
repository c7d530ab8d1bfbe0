// The training loop every task shares (train/loop.hpp), through the binary: --resume continues VQA and sequence-VAE
// runs bit for bit as translation's (tests/train/test_resume.cpp); runs killed with SIGKILL or SIGTERM at random points
// resume to the uninterrupted run's bytes; a second run on the same --save fails at once naming the holder; --save is
// checked before any training; -q silences the epoch lines.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <random>
#include <regex>
#include <thread>

#include "nn/safetensors.hpp"
#include "support/cli_runner.hpp"
#include "support/epoch_lines.hpp"
#include "support/temp_dir.hpp"

namespace {

// A `lava data synth` corpus (40 pairs: 5 batches of 8) and a `lava data scenes` set (30 scenes, 150 questions).
struct LoopData {
  TempDir tmp{"loop_data"};
  std::string synth = tmp.file("synth"), scenes = tmp.file("scenes");
  LoopData() {
    REQUIRE(run_lava("data synth --out " + synth + " --train 40 --valid 8 --test 4 --min-len 3 --max-len 6 --vocab 20 -q")
                .code == 0);
    REQUIRE(run_lava("data scenes --out " + scenes + " --train 30 --valid 6 --test 6 --questions 5 -q").code == 0);
  }
};
const LoopData& data() {
  static const LoopData d;
  return d;
}

// The flags of a small run of each task (sampling and dropout where the task has them, so the random streams must
// line up after a resume). One thread: these models are far too small to share, and spinning threads only slow the
// runs down on a loaded machine.
std::string task_flags(const std::string& task) {
  if (task == "vqa")
    return "--task vqa --data " + data().scenes +
           " --attn var-sample --emb-size 6 --hidden-size 8 --attn-size 5 --mlp-size 7 --answer-emb 4 --dropout 0.2 "
           "--batch-size 16 --seed 5 --threads 1 --format json -q";
  if (task == "seqvae")
    return "--task seqvae --data " + data().synth +
           " --emb-size 6 --hidden-size 8 --latent-size 3 --attn-size 5 --dropout 0.2 --batch-size 8 --kl-anneal 7 "
           "--seed 5 --threads 1 --format json -q";
  return "--task nmt --data " + data().synth +
         " --attn var-sample --emb-size 6 --hidden-size 8 --attn-size 5 --inf-hidden 6 --dropout 0.2 --batch-size 8 "
         "--seed 5 --threads 1 --format json -q";
}

// Every tensor of two safetensors files holds the same bits.
void check_same_tensors(const std::string& a_path, const std::string& b_path) {
  const lava::SafetensorsFile a = lava::load_safetensors(a_path), b = lava::load_safetensors(b_path);
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    CAPTURE(a.tensors[i].name);
    CHECK(a.tensors[i].name == b.tensors[i].name);
    CHECK(a.tensors[i].data == b.tensors[i].data);
  }
}

// Starts `lava ARGS` in the background (stdout and stderr to files); returns its PID.
pid_t spawn_lava(const std::string& args, const std::string& out, const std::string& err) {
  const std::string cmd = "exec " + lava_bin() + " " + args + " >" + out + " 2>" + err + " </dev/null";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return child;
}

// Waits for the child (killing it after `seconds`); its wait status.
int reap(pid_t child, int seconds = 120) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) != child) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

}  // namespace

TEST_CASE("train loop: vqa and seqvae runs stopped twice and resumed end with the uninterrupted run's bits") {
  for (const std::string task : {"vqa", "seqvae"}) {
    CAPTURE(task);
    TempDir tmp("loop_resume");
    const std::string full = tmp.file("full.st"), part = tmp.file("part.st");
    // 10 batches an epoch for VQA (150 questions / 16), 5 for the corpus: the stops fall inside epochs.
    const std::string flags = task_flags(task) + " --epochs 3";
    const int64_t total = task == "vqa" ? 24 : 13;
    const CliResult straight = run_lava("train " + flags + " --max-steps " + std::to_string(total) + " --save " + full);
    REQUIRE(straight.code == 0);
    std::vector<std::string> chained;
    for (int64_t stop : {total / 3, 2 * total / 3 + 1, total}) {
      const std::string resume = stop == total / 3 ? "" : " --resume " + part + ".resume";
      const CliResult r = run_lava("train " + flags + " --max-steps " + std::to_string(stop) + " --save " + part + resume);
      REQUIRE(r.code == 0);
      for (const std::string& l : epoch_lines(r.out, stop == total)) chained.push_back(l);
    }
    CHECK(chained == epoch_lines(straight.out, true));
    CHECK(slurp(full) == slurp(part));  // the best-model files, byte for byte
    check_same_tensors(full + ".resume", part + ".resume");
    // Options that shape training must match.
    const CliResult other = run_lava("train " + flags + " --seed 6 --save " + part + " --resume " + part + ".resume");
    CHECK(other.code == 2);
    CHECK(other.err.find("--seed") != std::string::npos);
  }
}

TEST_CASE("train loop: runs killed by SIGKILL or SIGTERM at random points resume to the uninterrupted run's bytes") {
  std::mt19937 pick(12345);
  for (const std::string task : {"nmt", "vqa", "seqvae"}) {
    CAPTURE(task);
    TempDir tmp("loop_kill");
    const std::string flags = task_flags(task) + (task == "vqa" ? " --epochs 2" : " --epochs 30") + " --checkpoint-every 1";
    const std::string full = tmp.file("full.st"), part = tmp.file("part.st");
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(run_lava("train " + flags + " --save " + full).code == 0);
    // Kill delays are fractions of the uninterrupted run's own wall time, so that they fall inside a run on an idle
    // machine as on a loaded one (fixed 20-400 ms missed every run of a fast machine).
    const int full_ms =
        int(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
    // Kill the run a random moment after it started, three times, then let it finish.
    int killed = 0;
    for (int kill = 0; kill < 3; ++kill) {
      const bool resume = std::filesystem::exists(part + ".resume");
      const pid_t child = spawn_lava("train " + flags + " --save " + part + (resume ? " --resume " + part + ".resume" : ""),
                                     tmp.file("out"), tmp.file("err"));
      if (!resume) {
        // The first kill waits for the first checkpoint, then strikes within a tenth of a run: a run measured on a
        // busier machine than this one's would otherwise let it finish before every delay drawn below.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * full_ms + 1000);
        while (!std::filesystem::exists(part + ".resume") && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::this_thread::sleep_for(
            std::chrono::milliseconds(std::uniform_int_distribution<int>(0, full_ms / 10)(pick)));
      } else {
        std::this_thread::sleep_for(
            std::chrono::milliseconds(std::uniform_int_distribution<int>(full_ms / 10, full_ms * 6 / 10)(pick)));
      }
      ::kill(child, kill % 2 ? SIGTERM : SIGKILL);
      const int status = reap(child);
      INFO(slurp(tmp.file("err")));
      CHECK((WIFSIGNALED(status) || (WIFEXITED(status) && (WEXITSTATUS(status) == 143 || WEXITSTATUS(status) == 0))));
      killed += WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 143);
    }
    CHECK(killed > 0);  // at least one kill hit a running training
    const bool resume = std::filesystem::exists(part + ".resume");
    const CliResult last = run_lava("train " + flags + " --save " + part + (resume ? " --resume " + part + ".resume" : ""));
    REQUIRE(last.code == 0);
    CHECK(slurp(full) == slurp(part));
    check_same_tensors(full + ".resume", part + ".resume");
  }
}

TEST_CASE("train loop: a second run on the same --save fails at once with one line naming the holder") {
  TempDir tmp("loop_lock");
  const std::string model = tmp.file("m.st");
  const pid_t holder = spawn_lava("train " + task_flags("nmt") + " --epochs 100000 --max-minutes 1 --save " + model,
                                  tmp.file("out"), tmp.file("err"));
  // The first run holds the lock once its first state exists (the lock is taken before the data is read).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(model + ".resume") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const CliResult second = run_lava("train " + task_flags("nmt") + " --epochs 1 --save " + model);
  ::kill(holder, SIGKILL);
  reap(holder);
  CHECK(second.code == 1);
  CHECK(second.err_lines() == 1);
  CHECK(second.err.find(model) != std::string::npos);
  CHECK(second.err.find("PID " + std::to_string(holder)) != std::string::npos);
  CHECK(second.out.find("\"event\":\"epoch\"") == std::string::npos);  // it did not train
}

TEST_CASE("train loop: --save is checked before training, and -q silences the epoch lines") {
  TempDir tmp("loop_save");
  for (const std::string task : {"nmt", "vqa", "seqvae"}) {
    CAPTURE(task);
    // A directory that does not exist: one line, exit 1, and nothing was trained: no progress line before it (the
    // progress bar is on: no -q), no JSON line.
    const std::string bad = tmp.file("missing/m.st");
    const std::string loud = std::regex_replace(task_flags(task), std::regex(" -q"), "");
    const CliResult r = run_lava("train " + loud + " --epochs 1 --save " + bad);
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(bad) != std::string::npos);
    CHECK(r.out.find("\"event\":\"epoch\"") == std::string::npos);
    // Table output with -q: nothing on stderr but warnings (these tiny var-sample runs collapse, and the collapse
    // warning is meant to be seen even under -q; the JSON field carries it too).
    const std::string table = std::regex_replace(task_flags(task), std::regex("--format json"), "--format table");
    const CliResult quiet = run_lava("train " + table + " --epochs 1");
    CHECK(quiet.code == 0);
    CHECK(std::regex_replace(quiet.err, std::regex("lava train: warning: [^\n]*\n"), "").empty());
  }
}

TEST_CASE("train loop: the done line says why each task's run stopped, and where its best model was made") {
  TempDir tmp("loop_stop");
  // Each reason, for every task: the whole --epochs budget, an update budget, and patience (a learning rate far too
  // large for these tiny models gives epoch ends without a better validation quickly; lr 0 would never improve).
  struct Case {
    std::string flags, reason;
  };
  const std::vector<Case> cases = {{"--epochs 2", "epochs"},
                                   {"--epochs 5 --max-steps 3", "max-steps"},
                                   {"--epochs 60 --patience 1 --start-decay-at 1 --lr 0.5", "patience"}};
  for (const std::string task : {"nmt", "vqa", "seqvae"}) {
    for (const Case& c : cases) {
      CAPTURE(task);
      CAPTURE(c.reason);
      const CliResult r = run_lava("train " + task_flags(task) + " " + c.flags + " --save " + tmp.file(task + c.reason));
      INFO(r.err);
      REQUIRE(r.code == 0);
      const std::vector<std::string> lines = lines_of(r.out);
      std::string done;
      for (const std::string& l : lines)
        if (l.find("\"event\":\"done\"") != std::string::npos) done = l;
      CHECK(done.find("\"stop\":\"" + c.reason + "\"") != std::string::npos);
      CHECK(done.find("\"best_epoch\":") != std::string::npos);
    }
  }
}
