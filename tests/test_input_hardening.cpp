// Bad input that used to pass or to echo itself: a stray positional argument, a directory where a file is read, a
// key or token with control characters or 100,000 bytes in a message, invalid UTF-8 in the VQA questions, a
// model with NaN or infinite weights, an IDX header that declares more data than the file holds. Each is one
// short line on stderr and the right exit code.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "check_input_error.hpp"
#include "cli_runner.hpp"
#include "core/atomic_file.hpp"
#include "core/quote_input.hpp"
#include "core/utf8.hpp"
#include "data/idx_reader.hpp"
#include "data/vqa_questions.hpp"
#include "non_finite_model.hpp"
#include "report/table.hpp"
#include "temp_dir.hpp"
#include "tiny_nmt.hpp"

using namespace lava;

namespace {

size_t longest_line(const std::string& s) {
  size_t best = 0, start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '\n') best = std::max(best, i - start), start = i + 1;
  return best;
}

}  // namespace

TEST_CASE("quote_input: control characters and bad UTF-8 escaped, long input cut with its length") {
  CHECK(quote_input("plain") == "'plain'");
  CHECK(quote_input(std::string("a\nb\tc\rd\0e", 9)) == "'a\\nb\\tc\\rd\\x00e'");
  CHECK(quote_input("it's") == "'it\\'s'");
  CHECK(quote_input("k\"ey", '"') == "\"k\\\"ey\"");
  CHECK(quote_input("caf\xc3\xa9 \xff") == "'caf\xc3\xa9 \\xff'");  // valid UTF-8 kept, a stray byte escaped
  const std::string long_key(100000, 'k');
  const std::string q = quote_input(long_key);
  CHECK(q.size() < kQuoteMaxBytes + 40);
  CHECK(q.find("(100000 bytes)") != std::string::npos);
  // A cut never splits a UTF-8 sequence or an escape.
  std::string umlauts;
  for (int i = 0; i < 300; ++i) umlauts += "\xc3\xbc";
  CHECK(is_valid_utf8(quote_input(umlauts)));
  CHECK(one_line("two\nlines") == "two\\nlines");
}

TEST_CASE("input hardening cli: an extra positional argument is a usage error naming it, for every command") {
  for (const char* args : {"toy extra", "toy --steps 3 extra", "gradcheck extra", "eval --model m --data d extra",
                           "eval --task vqa --model m extra", "eval --task seqvae --model m extra",
                           "train --data d extra", "train --task vqa extra", "train --task seqvae extra",
                           "translate --model m extra", "align --model m extra", "bench gemm extra",
                           "bench train extra", "data synth --out d extra", "data gettext extra",
                           "data scenes extra"}) {
    CAPTURE(args);
    const CliResult r = run_lava(args);
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("unexpected argument 'extra'") != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("input hardening cli: a directory where a file is read is an error naming it") {
  TempDir dir("dir_as_file");
  const std::string d = dir.dir.string();
  for (const std::string& args : {"toy --config " + d, "toy --params " + d, "eval --model " + d + " --data " + d,
                                  "translate --model " + d + " --input " + d}) {
    CAPTURE(args);
    const CliResult r = run_lava(args);
    CHECK(r.code == 1);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(d) != std::string::npos);
    CHECK(r.out.empty());
  }
  check_input_error([&] { (void)read_file(d); }, d, "is a directory");
}

TEST_CASE("input hardening cli: echoed input is escaped and cut, so every message is one short line") {
  TinyNmt f;
  // A safetensors key holding newlines and NUL (JSON escapes), and one of 100,000 bytes.
  SafetensorsFile file = load_safetensors(f.model_path);
  const std::string bad = f.tmp.file("bad_key.safetensors");
  for (const std::string& key : {std::string("evil\nkey\nwith\rlines\x01"), std::string(100000, 'k')}) {
    SafetensorsFile copy = file;
    copy.tensors[0].name = key;
    save_safetensors(bad, copy.tensors, copy.metadata);
    const CliResult r = run_lava(f.eval(bad));
    CHECK(r.code == 1);
    CHECK(r.err_lines() == 1);
    CHECK(longest_line(r.err) < bad.size() + 400);
  }
  // A NUL byte and a newline-free control character in a gold alignment file.
  const std::string gold = f.tmp.file("gold.align");
  write_text(gold, std::string("0-0 1\0-1\x1b[31m\n", 14));
  CliResult r = run_lava("align -q --split test --model " + f.model_path + " --data " + f.corpus_dir + " --gold " + gold);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find('\0') == std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find("\\x00") != std::string::npos);
  // Option values.
  r = run_lava("train --attn \"$(printf 'soft\\nhard')\" --data " + f.corpus_dir);
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("soft\\nhard") != std::string::npos);
  r = run_lava("toy --steps " + std::string(5000, '9'));
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(longest_line(r.err) < 400);
}

TEST_CASE("input hardening: the VQA questions reader rejects invalid UTF-8 with file:line") {
  TempDir dir("q_utf8");
  const std::string path = dir.file("train.questions.tsv");
  write_text(path, "0\twhat is here\tbag\n1\twhat is \xff there\tshoe\n");
  check_input_error([&] { (void)read_vqa_questions(path, 4, 2); }, path + ":2", "invalid UTF-8 at byte 11");
  write_text(path, "0\twhat is here\tb\xc3\n");  // truncated sequence in the answer
  check_input_error([&] { (void)read_vqa_questions(path, 4, 2); }, path + ":1", "invalid UTF-8");
  write_text(path, "0\twas ist hier\tT\xc3\xbcte\n");  // valid UTF-8 still reads
  CHECK(read_vqa_questions(path, 4, 2).at(0).answer == "T\xc3\xbcte");
}

TEST_CASE("input hardening cli: a model with a NaN or infinite parameter is refused at load, naming the tensor") {
  TinyNmt f;
  const std::string bad = f.tmp.file("nan.safetensors");
  for (float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()}) {
    CAPTURE(v);
    const std::string tensor = write_non_finite_copy(f.model_path, bad, v);
    for (const std::string& args : {f.eval(bad), "translate -q --model " + bad + " --input " + f.corpus_dir + "/test.de",
                                    "align -q --split test --model " + bad + " --data " + f.corpus_dir}) {
      CAPTURE(args);
      const CliResult r = run_lava(args);
      CHECK(r.code == 1);
      CHECK(r.err_lines() == 1);
      CHECK(r.err.find(bad) != std::string::npos);
      CHECK(r.err.find("\"" + tensor + "\"") != std::string::npos);
      CHECK(r.err.find("non-finite") != std::string::npos);
      CHECK(r.out.empty());
    }
  }
}

TEST_CASE("input hardening: an IDX header declaring 1 GiB in a 9-byte file fails as truncated without allocating it") {
  TempDir dir("idx_big");
  const std::string path = dir.file("labels");
  write_text(path, std::string("\x00\x00\x08\x01\x40\x00\x00\x00\x07", 9));  // 2^30 labels, one byte of data
  // In a child process, so that its peak memory is its own.
  const pid_t child = ::fork();
  if (child == 0) {
    struct rusage before {}, after {};
    ::getrusage(RUSAGE_SELF, &before);
    int code = 3;
    try {
      (void)read_idx_labels(path);
    } catch (const InputError& e) {
      code = std::string(e.what()).find("truncated") != std::string::npos ? 0 : 4;
    } catch (...) {
      code = 5;
    }
    ::getrusage(RUSAGE_SELF, &after);
    if (code == 0 && after.ru_maxrss - before.ru_maxrss > 256 * 1024) code = 6;  // KiB: it allocated the 1 GiB
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 6: the declared size was allocated; 4/5: another error
}

TEST_CASE("input hardening: a diverged figure in a fixed-point column is printed in scientific notation") {
  Table t;
  t.add_column("name").add_column("ppl", ".3f");
  t.add_row({std::string("diverged"), std::exp(207.0)});
  t.add_row({std::string("fine"), 152.25});
  const std::string out = t.render(OutputFormat::table);
  CHECK(out.find("e+89") != std::string::npos);
  CHECK(out.find("152.250") != std::string::npos);
  CHECK(longest_line(out) < 40);
}

TEST_CASE("input hardening cli: --questions naming neither a directory nor a {split} path has the command prefix") {
  TempDir dir("q_prefix");
  const std::string feats = dir.file("f.npy");
  const CliResult r = run_lava("train --task vqa --features " + feats + " --questions " + dir.file("q.tsv"));
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.starts_with("lava train: --questions"));
}
