// Echoing a user's input in a message (core/quote_input.hpp): control characters and invalid UTF-8 escaped, a long
// value cut with its length, so that every error the binary prints is one short line whatever the input held: a
// model file's tensor key, a gold alignment file's bytes, an option's value.
#include <doctest/doctest.h>

#include <string>

#include "core/quote_input.hpp"
#include "core/utf8.hpp"
#include "nn/safetensors.hpp"
#include "support/cli_runner.hpp"
#include "support/tiny_nmt.hpp"

using namespace lava;

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

TEST_CASE("quote_input cli: echoed input is escaped and cut, so every message is one short line") {
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
