// lava train's smaller input defects, through the binary (so that the same tests can check any build of it): a --plot
// picture that cannot be written must not cost the epoch's resume state; a config file with a byte-order mark is
// read, one with a NUL byte is one line naming it; a --min-freq that leaves no word is refused.
#include <doctest/doctest.h>

#include <filesystem>

#include "nn/safetensors.hpp"
#include "resume_fixture.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "train/resume_state.hpp"

using namespace lava;
using resume_test::tiny_flags;

TEST_CASE("train inputs: a --plot write that fails leaves the epoch's line and resume state, and the run resumes") {
  TempDir tmp("plot_fails");
  const std::string model = tmp.file("m.st"), plots = tmp.file("plots");
  // A directory where the learning curves go: every write of them fails, as on a full disk.
  std::filesystem::create_directories(plots + "/learning-curves.svg");
  const std::string flags = "train " + tiny_flags() + " --epochs 2 --save " + model + " --plot " + plots;
  CliResult r = run_lava(flags);
  INFO(r.err);
  CHECK(r.code == 1);
  const std::vector<std::string> lines = lines_of(r.err);
  REQUIRE(!lines.empty());
  CHECK(lines.back() == "lava train: " + plots + "/learning-curves.svg: is a directory, not a file");
  for (size_t i = 0; i + 1 < lines.size(); ++i) CHECK(lines[i].find("warning: ") != std::string::npos);
  CHECK(r.out.find("\"epoch\":1") != std::string::npos);  // the epoch's line is out
  REQUIRE(std::filesystem::exists(resume_state_path(model)));
  CHECK(load_safetensors(resume_state_path(model)).metadata.at("state.epoch") == "2");  // epoch 1 is done

  std::filesystem::remove(plots + "/learning-curves.svg");
  r = run_lava(flags + " --resume " + resume_state_path(model));
  CHECK(r.code == 0);
  CHECK(r.out.find("\"epoch\":1,") == std::string::npos);  // not trained again
  CHECK(r.out.find("\"epoch\":2,") != std::string::npos);
  CHECK(std::filesystem::exists(plots + "/learning-curves.svg"));
}

TEST_CASE("train inputs: a config file's byte-order mark is skipped; a NUL byte is one line naming the file") {
  TempDir tmp("config_bytes");
  const std::string bom = tmp.file("bom.ini"), nul = tmp.file("nul.ini");
  write_text(bom, "\xEF\xBB\xBFsteps = 5\n");
  CliResult r = run_lava("toy --config " + bom);
  INFO(r.err);
  CHECK(r.code == 0);
  const char text[] = "# a comment\ndata = syn\0thetic\n";
  write_text(nul, std::string(text, sizeof text - 1));
  r = run_lava("train --config " + nul);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(nul + ":2: NUL byte") != std::string::npos);
}

TEST_CASE("train inputs: a --min-freq that leaves only the special tokens is refused with one line") {
  const CliResult r = run_lava("train " + tiny_flags() + " --epochs 1 --min-freq 1000000");
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("--min-freq 1000000 leaves only the special tokens in the vocabulary") != std::string::npos);
  CHECK(r.out.empty());
  const CliResult seqvae = run_lava("train --task seqvae --data " + resume_test::corpus_dir() +
                                    " --epochs 1 --min-freq 1000000 -q");
  CHECK(seqvae.code == 2);
  CHECK(seqvae.err.find("leaves only the special tokens") != std::string::npos);
}
