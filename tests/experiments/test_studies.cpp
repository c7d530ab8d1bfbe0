// The studies of experiments/studies/, sweep files: each plans at every scale into the runs, labels and evaluations
// it declares, and runs end to end at a tiny budget (two updates a run) on tiny data laid out as the file expects (a
// copy of it two folders below a temporary root, its data in ROOT/data): training, its evaluations, and the table
// its own comment prints (lava report --metrics ... as the file says, or nmt-length.sh).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_scenes.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kBudget = "--set max-steps=2 --set max-minutes=0";

// A temporary root with copies of experiments/studies/NAME at ROOT/experiments/studies/NAME.
struct StudyCopy {
  TempDir root{"study"};
  explicit StudyCopy(const std::vector<std::string>& names) {
    fs::create_directories(root.file("experiments/studies"));
    for (const std::string& n : names) fs::copy_file("experiments/studies/" + n, file(n));
    fs::create_directories(root.file("data"));
  }
  std::string file(const std::string& name) const { return root.file("experiments/studies/" + name); }
  std::string data(const std::string& name) const { return root.file("data/" + name); }
  void synth(const std::string& name) const {
    REQUIRE(run_lava(fmt::format("data synth --out {} --train 64 --valid 8 --test 8 --seed 1 -q", data(name))).code == 0);
  }
  // Scenes keep reading their images from the MNIST files they were made from: those stay in `images`.
  TempDir images{"study_images"};
  void scenes(const std::string& name) const { fs::create_directory_symlink(tiny_scenes(images), data(name)); }
  // Runs the runs number `indices` of NAME's plan at `scale` (training and evaluations), as lava sweep run would.
  void exec(const std::string& name, const std::string& scale, const std::vector<size_t>& indices) const {
    const CliResult p = run_lava(fmt::format("sweep plan {} --scale {} {} --format json", file(name), scale, kBudget));
    REQUIRE(p.code == 0);
    const std::vector<std::string> runs = lines_of(p.out);
    for (size_t i : indices) {
      REQUIRE(i < runs.size());
      const std::string key = "\"id\":\"", dir_key = "\"dir\":\"";
      const std::string id = runs[i].substr(runs[i].find(key) + key.size(), 16);
      const size_t dir_at = runs[i].find(dir_key) + dir_key.size();
      const std::string dir = runs[i].substr(dir_at, runs[i].find('"', dir_at) - dir_at);
      const CliResult r = run_lava(fmt::format("sweep exec {} --scale {} --run {} {} --threads 1", file(name), scale, id, kBudget));
      INFO(r.out << r.err);
      const std::string log = fs::exists(dir + "/train.log") ? slurp(dir + "/train.log") : "no train.log";
      INFO(log);
      REQUIRE(r.code == 0);
    }
  }
  // lava report ROOT/RUNS with the --metrics list NAME's comment gives.
  CliResult report(const std::string& name, const std::string& runs) const {
    const std::string text = slurp(file(name)), key = "--metrics ";
    const size_t at = text.find(key);
    REQUIRE(at != std::string::npos);
    const size_t from = at + key.size();
    return run_lava(fmt::format("report {} --metrics {}", root.file(runs), text.substr(from, text.find_first_of(" \n", from) - from)));
  }
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("studies: every file plans its runs at each scale") {
  struct Plan {
    std::string file, scale;
    size_t runs;
  };
  for (const Plan& p : std::vector<Plan>{{"nmt-length.ini", "quick", 3},
                                         {"nmt-length.ini", "full", 3},
                                         {"families-nmt.ini", "quick", 8 * 2},
                                         {"families-nmt.ini", "full", 8 * 3},
                                         {"families-vqa.ini", "quick", 8 * 2},
                                         {"families-vqa.ini", "full", 8 * 3},
                                         {"seqvae-collapse-synth.ini", "quick", 2 * 2 * 3},
                                         {"seqvae-collapse-synth.ini", "full", 2 * 2 * 3},
                                         {"seqvae-collapse-gettext.ini", "quick", 2 * 2},
                                         {"seqvae-collapse-gettext.ini", "full", 2 * 3},
                                         {"caption.ini", "quick", 7 * 2},
                                         {"caption.ini", "full", 7 * 2},
                                         {"synth-aer.ini", "quick", 8},
                                         {"synth-aer.ini", "full", 8 * 3},
                                         {"synth-aer.ini", "embedding", 8 * 3}}) {
    CAPTURE(p.file);
    CAPTURE(p.scale);
    const CliResult r = run_lava(fmt::format("sweep plan experiments/studies/{} --scale {} --format csv", p.file, p.scale));
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(lines_of(r.out).size() == p.runs + 1);  // the header and the runs
  }
}

TEST_CASE("studies: nmt-length.sh runs its sweep and prints BLEU per source-length bucket") {
  StudyCopy s({"nmt-length.ini", "nmt-length.sh"});
  s.synth("gettext-de-en-demo");
  const CliResult r = run_captured(fmt::format("LAVA={} bash {} {} --jobs 2", lava_bin(), s.file("nmt-length.sh"), kBudget));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("| Source length | Sentences | BLEU `none` | BLEU `soft` | BLEU `var-enum` |\n") == 0);
  for (const char* row : {"\n| 1–5 | ", "\n| 6–10 | ", "\n| 11–20 | ", "\n| 21+ | 0 | ", "\n| all | 8 | "}) {
    CAPTURE(row);
    CHECK(r.out.find(row) != std::string::npos);
  }
  CHECK(slurp(s.root.file("runs/studies/nmt-length-quick/table.md")) == r.out);
  const CliResult bad = run_captured(fmt::format("bash {} --no-such", s.file("nmt-length.sh")));
  CHECK(bad.code == 2);
  CHECK(bad.err_lines() == 1);
}

TEST_CASE("studies: families, both halves in one report") {
  StudyCopy s({"families-nmt.ini", "families-vqa.ini"});
  s.synth("synth-10k");
  s.scenes("scenes-5k");
  s.exec("families-nmt.ini", "quick", {0, 4});  // soft and var-dirichlet, seed 1
  s.exec("families-vqa.ini", "quick", {2});     // var-enum, seed 1
  const CliResult r = s.report("families-nmt.ini", "runs/studies/families-quick");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("| families-nmt.ini | soft | 1 | ") != std::string::npos);
  CHECK(r.out.find("| families-nmt.ini | var-dirichlet | 1 | ") != std::string::npos);
  CHECK(r.out.find("| families-vqa.ini | var-enum | 1 | ") != std::string::npos);
  CHECK(count(r.out, "| ok |") == 3);
}

TEST_CASE("studies: seqvae-collapse, synthetic and gettext halves with their labels") {
  StudyCopy s({"seqvae-collapse-synth.ini", "seqvae-collapse-gettext.ini"});
  s.synth("synth");
  s.synth("gettext-de-en-valid1000");
  s.exec("seqvae-collapse-synth.ini", "quick", {0, 8});  // lstm, none, plain; transformer, none, freebits
  s.exec("seqvae-collapse-gettext.ini", "quick", {1});   // none, freebits
  const CliResult r = s.report("seqvae-collapse-synth.ini", "runs/studies/seqvae-collapse-quick");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  // Grid columns in the order the runs name them: the gettext half (no encoder grid) first.
  CHECK(r.out.find("| sweep | dec-attn | label | encoder | seeds | steps | test:elbo |") == 0);
  CHECK(r.out.find("| seqvae-collapse-gettext.ini | none | freebits | - | 1 | 2 | ") != std::string::npos);
  CHECK(r.out.find("| seqvae-collapse-synth.ini | none | plain | lstm | 1 | 2 | ") != std::string::npos);
  CHECK(r.out.find("| seqvae-collapse-synth.ini | none | freebits | transformer | 1 | 2 | ") != std::string::npos);
  CHECK(count(r.out, "| ok |") == 3);
}

TEST_CASE("studies: caption") {
  StudyCopy s({"caption.ini"});
  s.scenes("scenes-2k");
  s.exec("caption.ini", "quick", {0, 2});  // soft and sat-hard, seed 1
  const CliResult r = s.report("caption.ini", "runs/studies/caption-quick");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("| soft | 1 | ") != std::string::npos);
  CHECK(r.out.find("| sat-hard | 1 | ") != std::string::npos);
  CHECK(count(r.out, "| ok |") == 2);
}

TEST_CASE("studies: synth-aer, its labels' options, AER and support columns") {
  StudyCopy s({"synth-aer.ini"});
  s.synth("synth");
  s.exec("synth-aer.ini", "quick", {2, 5});  // var-enum+warm and sparse-marginal-1.5
  const CliResult r = s.report("synth-aer.ini", "runs/studies/synth-aer-quick");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("| var-enum+warm | 1 | 2 | ") != std::string::npos);
  CHECK(r.out.find("| sparse-marginal-1.5 | 1 | 2 | ") != std::string::npos);
  CHECK(count(r.out, "| ok |") == 2);
  size_t seen = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(s.root.file("runs/studies/synth-aer-quick"))) {
    const std::string config = slurp((e.path() / "config.ini").string());
    if (config.find("attn = var-enum\n") != std::string::npos) seen += config.find("warm-start = 1500\n") != std::string::npos;
    if (config.find("attn = sparse-marginal\n") != std::string::npos) seen += config.find("alpha = 1.5\n") != std::string::npos;
  }
  CHECK(seen == 2);
}
