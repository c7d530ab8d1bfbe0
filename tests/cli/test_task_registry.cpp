// The task registry: one line a task makes `lava train`, `lava eval` and `lava sweep` know it. An unknown name is a
// usage error naming the tasks, a name registered twice is refused, each task's training options come from its own
// command line (common options included), and a sweep runs captioning like any other task.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/option_table.hpp"
#include "cli/task_registry.hpp"
#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/json.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_scenes.hpp"
#include "tasks/caption/trainer.hpp"
#include "tasks/nmt/trainer.hpp"
#include "tasks/seqvae/trainer.hpp"
#include "tasks/vqa/trainer.hpp"
#include "train/loop_option_table.hpp"

using namespace lava;

namespace {

std::unique_ptr<CommandLine> fake_command_line() {
  auto cl = std::make_unique<CommandLine>("train", "lava train --task fake", "a fake task");
  cl->options().add_options()("fake-size", po::value<std::string>()->default_value("3"), "a size");
  return cl;
}
int fake_run(const CommandLine& cl) { return int(cl.get_int("fake-size", 0, 100)); }

TaskCommands fake_task(const char* name) { return {name, fake_command_line, fake_run, fake_command_line, fake_run}; }

int run_fake(const TaskRegistry& tasks, TaskVerb verb, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return run_task_command(tasks, verb, int(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("task registry: dispatch by --task, the first task by default; unknown and repeated names refused") {
  const TaskRegistry tasks({fake_task("one"), fake_task("two")});
  CHECK(tasks.names() == std::vector<std::string>{"one", "two"});
  CHECK(std::string(tasks.default_task().name) == "one");
  CHECK(std::string(tasks.find("two").name) == "two");
  CHECK(run_fake(tasks, TaskVerb::train, {"train", "--fake-size", "7"}) == 7);
  CHECK(run_fake(tasks, TaskVerb::eval, {"eval", "--task", "two", "--fake-size", "9"}) == 9);
  try {
    tasks.find("three");
    FAIL("an unknown task was found");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) == "unknown task 'three' (one, two)");
  }
  CHECK_THROWS_AS(run_fake(tasks, TaskVerb::train, {"train", "--task", "three"}), UsageError);
  CHECK_THROWS_AS(TaskRegistry({fake_task("one"), fake_task("two"), fake_task("one")}), std::invalid_argument);
  CHECK_THROWS_AS(TaskRegistry({fake_task("")}), std::invalid_argument);
  CHECK_THROWS_AS(TaskRegistry({}), std::invalid_argument);

  const std::set<std::string> options = train_option_names(tasks, "two");
  for (const char* o : {"task", "fake-size", "seed", "threads", "format", "config"}) CHECK_MESSAGE(options.count(o), o);
  CHECK_THROWS_AS(train_option_names(tasks, "three"), UsageError);
  // The cross-checked tasks are those with a dump, in registry order.
  CHECK(tasks.crosschecked().empty());
  TaskCommands dumped = fake_task("three");
  dumped.crosscheck.dump = [](const CommandLine&, const crosscheck::CrosscheckOptions&, const std::string&) { return 0; };
  CHECK(TaskRegistry({fake_task("one"), dumped}).crosschecked() == std::vector<std::string>{"three"});
}

TEST_CASE("task registry: every task of lava is registered with its own training options") {
  const TaskRegistry& tasks = task_registry();
  CHECK(tasks.names() == std::vector<std::string>{"nmt", "vqa", "caption", "seqvae"});
  CHECK(train_option_names(tasks, "nmt").count("inf-hidden"));
  CHECK(train_option_names(tasks, "vqa").count("features"));
  CHECK(train_option_names(tasks, "caption").count("sat-reinforce"));
  CHECK(train_option_names(tasks, "seqvae").count("free-bits"));
  CHECK_FALSE(train_option_names(tasks, "caption").count("features"));
}

namespace {

// Every row of `table` is an option of `lava train --task TASK` and, when it belongs to the run's identity, an entry
// "--name" with the default's exact value.
template <class S>
void check_rows(const std::string& task, const OptionTable<S>& table, const S& defaults) {
  const std::set<std::string> options = train_option_names(task_registry(), task);
  const RunIdentity id = option_identity(table, defaults);
  for (const OptionRow<S>& row : table) {
    CHECK_MESSAGE(options.count(row.name), task, " --", row.name);
    const std::string value = std::visit([&](auto field) { return exact(defaults.*field); }, row.field);
    const bool listed =
        std::find(id.begin(), id.end(), std::pair<std::string, std::string>("--" + std::string(row.name), value)) !=
        id.end();
    CHECK_MESSAGE(listed == row.identity, task, " --", row.name);
  }
}

}  // namespace

TEST_CASE("option rows: each task's command line and its run identity come from the same rows") {
  check_rows("nmt", nmt_model_options(), Seq2SeqConfig());
  check_rows("nmt", nmt_corpus_options(), NmtCorpusOptions());
  check_rows("vqa", vqa_model_options(), VqaConfig());
  check_rows("caption", caption_model_options(), CaptionConfig());
  check_rows("seqvae", seqvae_model_options(), SeqVaeConfig());
  for (const char* task : {"nmt", "vqa", "caption", "seqvae"})
    check_rows(task, loop_option_table(), TrainLoopOptions());
  // A resumed run may change when it stops and how often it saves, not how it trains.
  RunIdentity loop = option_identity(loop_option_table(), TrainLoopOptions());
  std::set<std::string> keys;
  for (const auto& [key, value] : loop) keys.insert(key);
  CHECK(keys == std::set<std::string>{"--lr", "--lr-decay", "--start-decay-at", "--clip", "--init", "--valid-every"});
}

TEST_CASE("option rows: a text option (--src) is read, has its default, and belongs to the run's identity") {
  NmtCorpusOptions o;
  const RunIdentity id = option_identity(nmt_corpus_options(), o);
  CHECK(id == RunIdentity{{"--src", "de"}, {"--tgt", "en"}, {"--max-len", "50"}, {"--min-freq", "1"}, {"--max-vocab", "0"}});
  CommandLine cl("train", "lava train", "test");
  add_option_table(cl.options(), nmt_corpus_options(), NmtCorpusOptions());
  std::vector<std::string> args = {"train", "--src", "fr", "--max-len", "7"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  REQUIRE(cl.parse(int(argv.size()), argv.data()));
  read_option_table(cl, nmt_corpus_options(), o);
  CHECK(o.src == "fr");
  CHECK(o.tgt == "en");
  CHECK(o.max_len == 7);
  CHECK(o.reader().src_lang == "fr");
  CHECK(o.reader().max_len == 7);
  CHECK(o.vocab().min_freq == 1);
}

TEST_CASE("cli: lava sweep run trains captioning runs; their JSON lines carry the task") {
  if (std::system("parallel --version >/dev/null 2>&1") != 0) {
    MESSAGE("GNU parallel is not installed (make deps installs it): skipped");
    return;
  }
  TempDir d("sweep_caption");
  const std::string scenes = tiny_scenes(d);
  write_text(d.file("cap.ini"), "task = caption\ndata = " + scenes +
                                    "\nepochs = 1\nbatch-size = 4\nemb-size = 6\nhidden-size = 8\n"
                                    "annotation-size = 8\nattn-size = 4\ngrid.attn = soft, sat-hard\nout = cap\n");
  const CliResult r = run_lava("sweep run " + d.file("cap.ini") + " --jobs 2");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("2 finished, 0 failed") != std::string::npos);
  const CliResult report = run_lava("report " + d.file("cap") + " --metrics valid_nll,valid_bound --format json");
  CHECK(report.code == 0);
  int ok_rows = 0;
  for (const std::string& line : lines_of(report.out))
    if (!line.empty()) ok_rows += parse_json(line, "report").at("status").str() == "ok";
  CHECK(ok_rows == 2);
  int done = 0;
  for (const auto& entry : std::filesystem::directory_iterator(d.file("cap"))) {
    if (!entry.is_directory()) continue;
    for (const std::string& line : lines_of(read_file((entry.path() / "metrics.jsonl").string()))) {
      if (line.empty()) continue;
      const JsonValue j = parse_json(line, "metrics.jsonl");
      CHECK(j.at("task").str() == "caption");
      done += j.at("event").str() == "done";
    }
  }
  CHECK(done == 2);
}
