// The command line end to end: exit codes, one-line errors naming the option or file and line, help, config files,
// machine-readable output, and byte-identical results with 1 and 2 threads.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>

#include "core/json.hpp"
#include "gemm/gemm_bench.hpp"
#include "support/cli_runner.hpp"
#include "tasks/toy/toy.hpp"

using namespace lava;

namespace {
// One parsed object per line of `out` (the --format json convention).
std::vector<JsonValue> json_lines(const std::string& out) {
  std::vector<JsonValue> rows;
  for (size_t start = 0; start < out.size();) {
    const size_t end = out.find('\n', start);
    rows.push_back(parse_json(out.substr(start, end - start), "stdout"));
    start = end == std::string::npos ? out.size() : end + 1;
  }
  return rows;
}
}  // namespace

TEST_CASE("cli: usage errors exit 2 with one line naming the problem") {
  CliResult r = run_lava("");
  CHECK(r.code == 2);
  r = run_lava("no-such-command");
  CHECK(r.code == 2);
  CHECK(r.err.find("no-such-command") != std::string::npos);
  CHECK(r.err_lines() == 1);
  for (const char* args : {"toy --bogus", "toy --lr nan", "toy --lr inf", "toy --steps -3", "toy --steps 1.5",
                           "toy --states 0", "toy --format xml", "toy --threads two", "gradcheck --op nothing"}) {
    r = run_lava(args);
    CAPTURE(args);
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.out.empty());
  }
  CHECK(run_lava("toy --lr nan").err.find("--lr") != std::string::npos);
  CHECK(run_lava("toy --bogus").err.find("bogus") != std::string::npos);
}

TEST_CASE("cli: bad input files exit 1 with one line naming file and line") {
  CliResult r = run_lava("toy --params /nonexistent/params.json");
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("/nonexistent/params.json") != std::string::npos);

  const std::string bad = temp_path("bad.json");
  write_text(bad, "{\n  \"features\": [[1, 2]],\n  \"scores\": [1,, 2]\n}\n");
  r = run_lava("toy --params " + bad);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(bad + ":3") != std::string::npos);

  write_text(bad,
             "{\"features\": [[1, 2], [3, 4]],\n \"scores\": [0, 1],\n \"W1\": [[1, 2], [3]],\n \"b1\": [0, 0],\n"
             " \"W2\": [[1, 1], [1, -1]],\n \"b2\": [0, 0],\n \"label\": 1}\n");
  r = run_lava("toy --params " + bad);
  CHECK(r.code == 1);
  CHECK(r.err.find(bad + ":3") != std::string::npos);  // the short W1 row

  write_text(bad,
             "{\"features\": [[1, 2], [3, 4]],\n \"scores\": [0, 1],\n \"W1\": [[1, 2], [3, 1]],\n \"b1\": [0, 0],\n"
             " \"W2\": [[1, 1], [1, -1]],\n \"b2\": [0, 0],\n \"label\": 5}\n");
  r = run_lava("toy --params " + bad);
  CHECK(r.code == 1);
  CHECK(r.err.find(bad + ":7") != std::string::npos);  // label out of range
  std::remove(bad.c_str());
}

TEST_CASE("cli: --help, --config, and the command line winning over the config") {
  CliResult r = run_lava("toy --help");
  CHECK(r.code == 0);
  CHECK(r.out.find("--params") != std::string::npos);
  CHECK(r.out.find("--seed") != std::string::npos);
  CHECK(run_lava("--help").code == 0);

  const std::string ini = temp_path("toy.ini");
  write_text(ini, "# a comment\nsteps = 7\nformat = json\n");
  r = run_lava("toy --config " + ini + " --trace");
  CHECK(r.code == 0);
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 7 + 1 + 1);  // steps 0..7, then the summary
  r = run_lava("toy --config " + ini + " --trace --steps 3");
  lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 3 + 1 + 1);
  write_text(ini, "stepz = 7\n");
  r = run_lava("toy --config " + ini);
  CHECK(r.code == 2);
  std::remove(ini.c_str());
}

TEST_CASE("cli: lava toy --format json is byte-identical with 1 and 2 threads") {
  CliResult one = run_lava("toy --format json --trace --threads 1 --states 40 --hidden 64");
  CliResult two = run_lava("toy --format json --trace --threads 2 --states 40 --hidden 64");
  REQUIRE(one.code == 0);
  CHECK(one.out == two.out);
  CHECK(!one.out.empty());
}

TEST_CASE("cli: lava toy --params agrees with the JSON it was given (K = 2 and 50)") {
  for (int K : {2, 50}) {
    ToyParams p = toy_params_random(uint64_t(K), K, 3, 7, 4);
    JsonLine j;
    auto rows = [](const std::vector<double>& v, int n_rows, int n_cols) {
      std::string s = "[";
      for (int r = 0; r < n_rows; ++r) {
        s += r ? ",[" : "[";
        for (int c = 0; c < n_cols; ++c) {
          if (c) s += ",";
          append_json_number(s, v[size_t(r * n_cols + c)]);
        }
        s += "]";
      }
      return s + "]";
    };
    j.add_raw("features", rows(p.features, K, p.D)).add("scores", p.scores);
    j.add_raw("W1", rows(p.W1, p.H, p.D)).add("b1", p.b1).add_raw("W2", rows(p.W2, p.C, p.H)).add("b2", p.b2);
    j.add("label", p.label);
    const std::string path = temp_path("params.json");
    write_text(path, j.str());
    CliResult r = run_lava("toy --format json --steps 200 --params " + path);
    std::remove(path.c_str());
    REQUIRE(r.code == 0);
    const JsonValue out = parse_json(r.out, "stdout");
    ToyOptions opt;
    opt.steps = 200;
    const ToyResult direct = run_toy(p, opt);
    CHECK(out.at("log_p_exact").number() == direct.log_p_exact);  // bit-exact through JSON
    CHECK(out.at("elbo").number() == direct.elbo);
    CHECK(out.at("posterior").size() == size_t(K));
    CHECK(std::abs(out.at("kl_gap").number() - out.at("kl_q_posterior").number()) < 1e-9);
  }
}

TEST_CASE("cli: lava gradcheck passes every op and prints JSON lines") {
  CliResult r = run_lava("gradcheck --format json");
  CHECK(r.code == 0);
  const std::vector<JsonValue> rows = json_lines(r.out);
  for (const JsonValue& row : rows) CHECK(row.at("pass").str() == "pass");
  CHECK(rows.size() > 50);
  CHECK(run_lava("gradcheck --tol 1e-30").code == 1);  // an impossible tolerance fails
}

TEST_CASE("cli: lava bench gemm prints one JSON row per case and rejects bad lists") {
  CliResult r = run_lava("bench gemm --quick --sizes 16,24 --thread-counts 1 --repeats 1 --format json");
  REQUIRE(r.code == 0);
  const std::vector<JsonValue> rows = json_lines(r.out);
  for (const JsonValue& row : rows) {
    CHECK(row.at("gflops").number() > 0);
    CHECK(row.at("packed_gflops").number() > 0);
    CHECK(row.at("kernel_loop_ratio").number() > 0);
    CHECK(row.at("error_ratio").number() <= 1.0);  // the product timed is the right one
    CHECK(row.at("trans").str() == "NN");
    // which kernels ran: LAVA's micro-kernel, and OpenBLAS's core name exactly when OpenBLAS was timed
    CHECK(row.at("kernel").str() == lava::gemm_kernel_name());
    const bool timed = row.at("openblas_gflops").is_number();
    CHECK(timed == (row.at("openblas_kernel").str() != "n/a"));
    CHECK(!row.at("openblas_kernel").str().empty());
  }
  CHECK(rows.size() == 2);
  CHECK(run_lava("bench gemm --sizes 0").code == 2);
  CHECK(run_lava("bench gemm --sizes 8,x").code == 2);
  CHECK(run_lava("bench nothing").code == 2);
}

TEST_CASE("cli: lava bench gemm --shapes adds each shape in NN, NT and TN, and rejects what is not MxNxK") {
  CliResult r =
      run_lava("bench gemm --quick --sizes 8 --shapes 12x40x7,5x3x2 --thread-counts 1 --repeats 1 --format json");
  REQUIRE(r.code == 0);
  std::vector<std::string> cases;
  for (const JsonValue& row : json_lines(r.out))
    cases.push_back(fmt::format("{}x{}x{} {}", row.at("m").number(), row.at("n").number(), row.at("k").number(),
                                row.at("trans").str()));
  CHECK(cases == std::vector<std::string>{"8x8x8 NN", "12x40x7 NN", "12x40x7 NT", "12x40x7 TN", "5x3x2 NN",
                                          "5x3x2 NT", "5x3x2 TN"});
  for (const char* bad : {"12x40", "12x40x7x2", "12x0x7", "12xx7", "12x40x", "a", "12x40x7,", "12x40x7.5"}) {
    const CliResult e = run_lava(fmt::format("bench gemm --quick --sizes 8 --repeats 1 --shapes {}", bad));
    CHECK_MESSAGE(e.code == 2, bad);
    CHECK_MESSAGE(e.err.find("--shapes") != std::string::npos, bad);
  }
}
