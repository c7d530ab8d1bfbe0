// lava report --tables paper on run folders with known figures: each table's mean ± sd over seeds (sd divides by
// n − 1), the rows and seeds each table counts, the JSON lines, and bad input that names FILE:LINE.
#include <doctest/doctest.h>

#include <filesystem>
#include <stdexcept>

#include <cmath>
#include <string>
#include <vector>

#include "cli/paper_rows.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "core/json.hpp"
#include "report/paper_run_fixture.hpp"
#include "report/paper_tables.hpp"
#include "report/run_record.hpp"
#include "support/temp_dir.hpp"
#include "support/xml_check.hpp"

using namespace lava;

namespace {

std::string tables_of(const std::string& dir) {
  return paper_tables(read_paper_runs(find_run_dirs({dir})), paper_rows_of_variants()).markdown();
}

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : lines_of(text))
    if (l == line) return true;
  INFO("missing line: " << line);
  return false;
}

PaperRunSpec spec(const std::string& attn, int seed, int steps = 100, int seconds = 60) {
  PaperRunSpec s;
  s.attn = attn, s.seed = seed;
  s.done = fmt::format(R"("steps":{},"epochs":2,"best_epoch":1,"stop":"patience","seconds":{},"cpu_seconds":{},)"
                       R"("valid_ppl":9.5,"nan":false)",
                       steps, seconds, seconds / 2);
  return s;
}

// Translation: soft over three seeds, marginal over two (one with a K-max evaluation), var-enum and var-rws once,
// var-sample still training, in folders two levels down.
void write_translation(const std::string& root) {
  const std::string dir = root + "/sweeps/nmt";
  const double ppl[] = {10, 12, 14}, bleu[] = {20, 21, 22};
  for (int s = 1; s <= 3; ++s) {
    const std::string run = write_paper_run(dir, "soft" + std::to_string(s), spec("soft", s, 100 * s, 60 * s));
    write_text(run + "/eval/a.jsonl", nmt_eval_row(ppl[s - 1], bleu[s - 1]));
  }
  std::string run = write_paper_run(dir, "marginal1", spec("marginal", 1));
  write_text(run + "/eval/test.jsonl", nmt_eval_row(9, 25));
  // Named unlike what they hold: evaluations are known by their fields.
  write_text(run + "/eval/test-again.jsonl", nmt_eval_row(9.5, 24, 5));
  write_text(run + "/eval/zz.jsonl", nmt_eval_row(30, -1, 3));
  run = write_paper_run(dir, "marginal2", spec("marginal", 2));
  write_text(run + "/eval/test.jsonl", nmt_eval_row(11, 23));
  run = write_paper_run(dir, "var-enum", spec("var-enum", 1));
  write_text(run + "/eval/test.jsonl", nmt_eval_row(8, 26, 0, 0.625, 0.7));
  PaperRunSpec rws = spec("var-rws", 1);
  rws.extra_config = "samples = 5\n";
  run = write_paper_run(dir, "var-rws", rws);
  write_text(run + "/eval/test.jsonl", nmt_eval_row(8.5, 25.5));
  PaperRunSpec sample = spec("var-sample", 1);
  sample.done = "";
  // Its second epoch did not improve the bound: the best so far is the first.
  sample.epochs += "\n" R"({"event":"epoch","epoch":2,"steps":100,"valid_ppl":9.8,"valid_nll":1.6,"best":false})";
  // A run still training has no eval/ folder yet (lava sweep makes it when the first evaluation starts).
  std::filesystem::remove_all(write_paper_run(dir, "var-sample", sample) + "/eval");
  // Stopped within its first epoch: no epoch line yet, but started.
  PaperRunSpec hard = spec("hard-enum", 1);
  hard.done = "", hard.epochs = "", hard.state = "stopped";
  std::filesystem::remove_all(write_paper_run(dir, "hard-enum", hard) + "/eval");
}

}  // namespace

TEST_CASE("paper tables: translation Table 1, runs, Table 2 and Table 3 from known figures") {
  TempDir d("paper_tables_nmt");
  write_translation(d.dir.string());
  const std::string md = tables_of(d.dir.string());
  INFO(md);
  // Table 1: PPL 10, 12, 14 -> 12 ± 2; BLEU 20, 21, 22 -> 21 ± 1; steps 100..300 -> 200 ± 100; time 60..180 s -> 2m.
  CHECK(has_line(md, "| Soft Attention | log p(y \\| E[z]) | – | `soft` | 12.00 ± 2.00 | 7.17 | 21.00 ± 1.00 | 32.77 | "
                     "-2.500 ± 0.000 | 0.500 ± 0.000 | 0.2500 ± 0.0000 | 1.00 ± 0.00 | 0.500 ± 0.000 | 2m00s | 200 ± 100 |"));
  // PPL 9 and 11 -> 10 ± sqrt(2); the K-max evaluation is no test figure of Table 1.
  CHECK(has_line(md, "| Marginal Likelihood | log E[p] | Enum | `marginal` | 10.00 ± 1.41 | 6.34 | 24.00 ± 1.41 | 33.29 | "
                     "-2.500 ± 0.000 | 0.500 ± 0.000 | 0.2500 ± 0.0000 | 1.00 ± 0.00 | 0.500 ± 0.000 | 1m00s | 100 ± 0 |"));
  // A run without a done line: how far it got, its best validation so far, and no test figures.
  CHECK(has_line(md, "| Variational Attention | E_q[log p] − KL | Sample | `var-sample` | – | 6.17 | – | 33.30 | – | – | – | – | – | – | – |"));
  CHECK(has_line(md, "| `var-sample` | 1 | 2 | 100 | not finished | 1 | 9.50 | – |"));
  CHECK(has_line(md, "| `hard-enum` | 1 | – | – | not finished | – | – | – |"));
  CHECK(has_line(md, "| `soft` | 3 | 2 | 300 | patience | 1 | 9.50 | 3m00s |"));
  // Table 2: K from the evaluation with BLEU and K > 0 (not the K = 3 one without BLEU); only marginal seed 1 has
  // one, so both columns average seed 1 alone.
  CHECK(md.find("## Table 2: exact against K-max attention (K = 5), the same models") != std::string::npos);
  CHECK(has_line(md, "| Marginal Likelihood | Enum | `marginal` | 9.00 | 9.50 | 6.34 / 6.90 | 25.00 | 24.00 | 33.29 / 33.31 | 1/2 |"));
  // Table 3: the inference alternatives that have runs; var-sample's is planned but not finished (0/1).
  CHECK(has_line(md, "| Variational Attention | `var-enum` | 8.00 | 6.08 | 26.00 | 33.68 | 0.625 | 1/1 |"));
  CHECK(has_line(md, "| Variational Attention | `var-sample` | – | 6.17 | – | 33.30 | – | 0/1 |"));
  CHECK(has_line(md, "| Variational Attention (RWS) | `var-rws` | 8.50 | 6.41 | 25.50 | 32.96 | 0.500 | 1/1 |"));
  // The notes of the rows with runs only: var-gumbel has none, so its τ is not stated.
  CHECK(md.find("var-rws draws K = 5 samples from q (src/method.md") != std::string::npos);
  CHECK(md.find("var-gumbel relaxes") == std::string::npos);
  CHECK(has_line(md, "| Variational Attention | `var-enum` | 0.70 | 0.54 | 2.07 |"));
  // Compute: the 7 finished runs, 1000 updates, 600 s, 300 CPU-seconds.
  CHECK(has_line(md, "| nmt | 7 | 1000 | 0.17 | 0.08 | 0 | 0.00 |"));

  // JSON lines: the same figures at full precision.
  const CliResult r = run_lava("report " + d.dir.string() + " --tables paper --format json");
  REQUIRE(r.code == 0);
  bool seen = false;
  for (const std::string& line : lines_of(r.out)) {
    if (line.empty()) continue;
    const JsonValue j = parse_json(line, "stdout");
    if (j.at("table").str() != "nmt-table1" || j.at("attn").str() != "soft") continue;
    seen = true;
    CHECK(j.at("ppl").number() == 12);
    CHECK(j.at("ppl_sd").number() == 2);
    CHECK(j.at("ppl_n").as_int() == 3);
    CHECK(j.at("bleu_sd").number() == doctest::Approx(1).epsilon(1e-15));
    CHECK(j.at("paper_ppl").number() == 7.17);
    CHECK(j.at("objective").str() == "log p(y | E[z])");
  }
  CHECK(seen);
}

TEST_CASE("paper tables: VQA Table 1 per mix and the VQA columns of the prior entropy") {
  TempDir d("paper_tables_vqa");
  const double acc[] = {0.5, 0.7}, nll[] = {1.0, 2.0}, entropy[] = {1.2, 1.4};
  for (int s = 1; s <= 2; ++s) {
    PaperRunSpec v = spec("soft", s);
    v.task = "vqa", v.data = "../data/scenes-a";
    if (s == 2) v.done = R"("steps":100,"epochs":2,"best_epoch":1,"stop":"epochs","seconds":60,"nan":false)";
    const std::string run = write_paper_run(d.file("vqa"), "soft" + std::to_string(s), v);
    write_text(run + "/eval/x.jsonl", vqa_eval_rows(acc[s - 1], nll[s - 1], entropy[s - 1]));
  }
  // A sequence VAE run beside them has no attn and no row in the paper's tables: left out.
  PaperRunSpec vae = spec("soft", 1);
  vae.task = "seqvae";
  write_paper_run(d.file("vae"), "r", vae);
  write_text(d.file("vae/r/config.ini"), "task = seqvae\nseed = 1\n");
  const std::string md = tables_of(d.dir.string());
  INFO(md);
  CHECK(md.find("seqvae") == std::string::npos);
  CHECK(has_line(md, "## Mix `a`: 100 test questions"));
  // Accuracy 50 and 70 % -> 60 ± 14.14; NLL 1 and 2 -> 1.5 ± 0.707; −ELBO likewise; stops counted by name.
  CHECK(has_line(md, "| Soft Attention | log p(y \\| E[z]) | – | 1.500 ± 0.707 | 1.76 | 60.00 ± 14.14 | 58.93 | 1.500 ± 0.707 | "
                     "0.0200 ± 0.0000 | 1.30 ± 0.14 | epochs ×1, patience ×1 | 2.0 ± 0.0 | 100 ± 0 | 1.0 ± 0.0 | 1m00s | 2/2 |"));
  CHECK(has_line(md, "### Single-region questions (where: 40 of 100)"));
  CHECK(has_line(md, "| Soft Attention | 1.500 ± 0.707 | 1.76 | 60.00 ± 14.14 | 58.93 | 1.500 ± 0.707 | 0.0100 ± 0.0000 | 0.500 ± 0.000 |"));
  CHECK(has_line(md, "| where | single_region | 40 | 60.0 ± 14.1 (1.500 ± 0.707) |"));
  CHECK(has_line(md, "| how_many | multi_region | 60 | 60.0 ± 14.1 (1.500 ± 0.707) |"));
  CHECK(has_line(md, "| paper, all questions (VQA 2.0) | | | 58.93 (1.76) |"));
  // Table 3's prior entropy: no translation run, the mix's column.
  CHECK(has_line(md, "| Model | `--attn` | translation: prior entropy | paper | VQA, a mix | paper |"));
  CHECK(has_line(md, "| Soft Attention | `soft` | – | 1.24 | 1.30 ± 0.14 | 2.70 |"));
  // Seed 2's done line has no cpu_seconds (a run from before LAVA recorded it): no total.
  CHECK(has_line(md, "| vqa | 2 | 200 | 0.03 | – | 0 | 0.00 |"));
}

TEST_CASE("paper tables: bad input is one error naming the file and line") {
  TempDir d("paper_tables_bad");
  const std::string run = write_paper_run(d.file("sweep"), "r1", spec("soft", 1));
  write_text(run + "/eval/test.jsonl", nmt_eval_row(10, 20) + "{\"split\":\"test\",\n");
  const CliResult r = run_lava("report " + d.dir.string() + " --tables paper");
  CHECK(r.code == 1);
  CHECK(r.err.find(run + "/eval/test.jsonl:2:") != std::string::npos);
  CHECK(r.err_lines() == 1);

  write_text(run + "/eval/test.jsonl", R"({"event":"qtype","qtype":"where"})" "\n");
  check_input_error([&] { read_paper_runs({run}); }, run + "/eval/test.jsonl", "no result row");
  write_text(run + "/eval/test.jsonl", nmt_eval_row(10, 20));
  write_text(run + "/config.ini", "task = nmt\nseed = 1\n");
  check_input_error([&] { read_paper_runs({run}); }, run + "/config.ini", "no attn");
  write_text(run + "/config.ini", "task = nmt\nattn soft\n");
  check_input_error([&] { read_paper_runs({run}); }, run + "/config.ini:2", "key = value");
  write_text(run + "/config.ini", "task = nmt\nattn = soft\nseed = 1\n");
  // Two runs of one variant and seed in one table would count a seed twice.
  PaperRunSpec twin = spec("soft", 1);
  twin.extra_config = "lr = 1e-3\n";
  const std::string other = write_paper_run(d.file("sweep"), "r2", twin);
  write_text(other + "/eval/test.jsonl", nmt_eval_row(10, 20));
  const std::vector<PaperRun> runs = read_paper_runs(find_run_dirs({d.dir.string()}));
  check_input_error([&] { group_paper_runs(runs, paper_rows_of_variants()); }, other, "seed 1 of one table");
  // Options of --tables.
  CHECK(run_lava("report " + d.dir.string() + " --tables nope").code == 2);
  CHECK(run_lava("report " + d.dir.string() + " --tables paper --format csv").code == 2);
  CHECK(run_lava("report " + d.dir.string() + " --plots " + d.file("p")).code == 2);
}

TEST_CASE("paper tables: --plots writes the learning curves and PPL against K") {
  TempDir d("paper_tables_plots");
  write_translation(d.dir.string());
  const CliResult r = run_lava("report " + d.dir.string() + " --tables paper --plots " + d.file("pics"));
  REQUIRE(r.code == 0);
  const std::string curves = slurp(d.file("pics/nmt-curves.svg")), kmax = slurp(d.file("pics/kmax.svg"));
  CHECK(xml_problem(curves) == "");
  CHECK(xml_problem(kmax) == "");
  CHECK(curves.find(">soft<") != std::string::npos);
  // PPL against K: marginal's K = 3 and K = 5 evaluations, two points; no other row has one.
  CHECK(kmax.find(">marginal<") != std::string::npos);
  CHECK(kmax.find(">soft<") == std::string::npos);
  CHECK(std::filesystem::exists(d.file("pics/vqa-curves-a.svg")) == false);
}

TEST_CASE("paper tables: figures and times print as the experiment scripts printed them") {
  CHECK(format_figure(-0.0004, "%.3f") == "0.000");  // no sign on a figure that prints as zero
  CHECK(format_figure(-0.0006, "%.3f") == "-0.001");
  CHECK(format_figure(1e221, "%.2f") == "1e+221");  // a diverged bound, not 224 digits
  CHECK(format_figure(std::nan(""), "%.2f") == "–");
  CHECK(format_run_time(59.4) == "59s");
  CHECK(format_run_time(59.5) == "1m00s");
  CHECK(format_run_time(3725) == "1h02m");
  CHECK(format_run_time(1e300) == "1e+300s");
  // The mean time rounds half to even to whole seconds first (%.0f), then prints: 60.5 -> 60 s, 61.5 -> 62 s.
  CHECK(train_time_cell(seed_stat({60, 61})).text == "1m00s");
  CHECK(train_time_cell(seed_stat({61, 62})).text == "1m02s");
  CHECK(train_time_cell(seed_stat({})).text == "–");
  const SeedStat s = seed_stat({1, 2, std::nan(""), 3});
  CHECK(s.n() == 3);
  CHECK(s.sd() == 1);
  CHECK(stat_cell("x", s, "%.2f").text == "2.00 ± 1.00");
  CHECK(stat_cell("x", seed_stat({5}), "%.1f").text == "5.0");
}

TEST_CASE("paper tables: the rows are the list the command hands over, in rank order; Table 3 reads its notes") {
  // Rows of two made-up variants, ranked against their names' order, both Table 3 rows (the second ranked first),
  // one with a note that names an option.
  const PaperRows paper({{"aa", {.rank = 2, .model = "Model A", .nmt_ppl = 5.5, .inference_rank = 2,
                                 .inference_note = "draws K = {samples} samples, τ = {temperature}"}},
                         {"bb", {.rank = 1, .model = "Model B", .nmt_ppl = 6.25, .nmt_entropy = 0.5, .inference_rank = 1}},
                         {"zz", {.rank = 0, .model = "not a paper row"}}});
  REQUIRE(paper.all().size() == 2);
  CHECK(paper.all()[0].attn == "bb");
  CHECK(paper.of("zz") == nullptr);
  REQUIRE(paper.inference().size() == 2);
  CHECK(paper.inference()[0]->attn == "bb");
  TempDir d("paper_tables_rows");
  PaperRunSpec a = spec("aa", 1), b = spec("bb", 1), c = spec("cc", 1);
  a.extra_config = "samples = 7\n";
  for (const PaperRunSpec& s : {a, b, c}) {
    const std::string run = write_paper_run(d.file("sweep"), s.attn, s);
    write_text(run + "/eval/test.jsonl", nmt_eval_row(10, 20));
  }
  const std::string md = paper_tables(read_paper_runs(find_run_dirs({d.dir.string()})), paper).markdown();
  // Table 1: the paper's rows in rank order, then the others by name.
  const size_t ra = md.find("| Model A |"), rb = md.find("| Model B |"), rc = md.find("| cc |");
  REQUIRE(ra != std::string::npos);
  REQUIRE(rb != std::string::npos);
  REQUIRE(rc != std::string::npos);
  CHECK(rb < ra);
  CHECK(ra < rc);
  CHECK(md.find("| Model A | | | `aa` | 10.00 | 5.50 |") != std::string::npos);
  // Table 3: the inference rows, and the note with the runs' option (– when no run sets it).
  CHECK(md.find("| Model B | `bb` | 10.00 | 6.25 |") != std::string::npos);
  CHECK(has_line(md, "aa draws K = 7 samples, τ = – (src/method.md §2, §2.2)."));
  // Without paper rows every variant is a row by its name, and Table 3 has neither rows nor notes.
  const std::string bare = paper_tables(read_paper_runs(find_run_dirs({d.dir.string()})), PaperRows()).markdown();
  CHECK(bare.find("| aa | | | `aa` |") != std::string::npos);
  CHECK(bare.find("src/method.md §2, §2.2") == std::string::npos);
}

TEST_CASE("paper tables: two rows for one variant, or two rows in one place, are refused") {
  CHECK_THROWS_AS(PaperRows({{"aa", {.rank = 1}}, {"aa", {.rank = 2}}}), std::logic_error);
  CHECK_THROWS_AS(PaperRows({{"aa", {.rank = 1}}, {"bb", {.rank = 1}}}), std::logic_error);
  CHECK_THROWS_AS(PaperRows({{"aa", {.rank = 1, .inference_rank = 1}}, {"bb", {.rank = 2, .inference_rank = 1}}}),
                  std::logic_error);
  CHECK_NOTHROW(PaperRows({{"aa", {.rank = 1}}, {"bb", {.rank = 2}}}));
}

TEST_CASE("paper tables: the registry's variants declare the paper's rows, in the paper's order") {
  const PaperRows paper = paper_rows_of_variants();
  std::vector<std::string> names, inference;
  for (const PaperVariantRow& r : paper.all()) names.push_back(r.attn);
  for (const PaperVariantRow* r : paper.inference()) inference.push_back(r->attn);
  CHECK(names == std::vector<std::string>{"soft", "marginal", "hard-enum", "hard-sample", "var-dirichlet", "var-enum",
                                          "var-sample", "var-gumbel", "var-rws"});
  CHECK(inference == std::vector<std::string>{"var-enum", "var-sample", "var-rws", "var-gumbel"});
  // src/method.md §6, Table 1's variational attention (Enum) row.
  const PaperRow* v = paper.of("var-enum");
  REQUIRE(v);
  CHECK(std::string(v->model) == "Variational Attention");
  CHECK(v->nmt_ppl == 6.08);
  CHECK(v->vqa_eval == 58.44);
}
