// lava translate as the ecosystem's translators behave: standard input read as it arrives, raw text tokenised as the
// training corpus was (the word tokeniser and the BPE model recorded in the model file), old files taking tokenised
// input, and bad input named with its line.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/cli_runner.hpp"
#include "core/base64.hpp"
#include "core/read_file.hpp"
#include "data/corpus_tokenization.hpp"
#include "data/tokenize.hpp"
#include "tasks/nmt/model_file.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

// Raw German-English pairs written as people write them (capitals, punctuation), in a corpus directory tokenised by
// LAVA's word tokeniser and recording it, as `lava data gettext` leaves one.
void write_raw_corpus(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const char* de_nouns[] = {"Datei", "Ordner", "Seite", "Liste"};
  const char* en_nouns[] = {"file", "folder", "page", "list"};
  const char* de_verbs[] = {"öffnen", "speichern", "löschen"};
  const char* en_verbs[] = {"Open", "Save", "Delete"};
  std::string de, en;
  for (int k = 0; k < 48; ++k) {
    const int n = k % 4, v = (k / 4) % 3;
    const bool question = k % 2;
    const std::string src = fmt::format("{} {}{}", de_nouns[n], de_verbs[v], question ? "?" : ".");
    const std::string tgt = fmt::format("{} the {}{}", en_verbs[v], en_nouns[n], question ? "?" : ".");
    de += join_tokens(tokenize(src)) + "\n";
    en += join_tokens(tokenize(tgt)) + "\n";
  }
  for (const char* split : {"train", "valid", "test"}) {
    write_text(dir + "/" + split + ".de", de);
    write_text(dir + "/" + split + ".en", en);
  }
  write_tokenizer_record(dir, kLavaWordTokenizer);
}

std::string train_tiny(const std::string& corpus, const std::string& model) {
  return "train -q --task nmt --attn soft --data " + corpus + " --emb-size 8 --hidden-size 8 --attn-size 4 " +
         "--batch-size 8 --max-steps 6 --epochs 1 --seed 2 --save " + model;
}

// The "(N <unk>)" of translate's summary line.
long unknown_count(const std::string& err) {
  const size_t at = err.find(" <unk>)");
  REQUIRE(at != std::string::npos);
  const size_t open = err.rfind('(', at);
  return std::stol(err.substr(open + 1, at - open - 1));
}

}  // namespace

TEST_CASE("translate: standard input gives what --input FILE gives, and raw text what its tokenised form gives") {
  TempDir tmp("translate");
  const std::string corpus = tmp.file("words"), model = tmp.file("m.safetensors");
  write_raw_corpus(corpus);
  REQUIRE(run_lava(train_tiny(corpus, model)).code == 0);
  const LoadedNmt loaded = load_nmt(model);
  CHECK(loaded.tokenization.words == kLavaWordTokenizer);
  CHECK(loaded.tokenization.subword_model.empty());

  const std::string raw = tmp.file("raw.txt"), tokenised = tmp.file("tok.txt");
  write_text(raw, "Datei öffnen.\nDie LISTE speichern?\n\nOrdner   LÖSCHEN.\n");
  write_text(tokenised, "datei öffnen .\ndie liste speichern ?\n\nordner löschen .\n");
  const std::string base = lava_bin() + " translate --beam 2 --model " + model;
  const CliResult from_file = run_lava("translate --beam 2 --model " + model + " --input " + tokenised + " --tokenized");
  REQUIRE(from_file.code == 0);
  CHECK(lines_of(from_file.out).size() == 4);
  CHECK(lines_of(from_file.out)[2].empty());
  CHECK(unknown_count(from_file.err) == 1);  // "die" is not in the corpus

  // Standard input, absent --input or "-", piped or redirected, raw or tokenised: the same translations.
  for (const std::string& cmd : {"cat " + tokenised + " | " + base + " --tokenized",
                                 base + " --input - --tokenized < " + tokenised, "cat " + raw + " | " + base,
                                 base + " --input " + raw, base + " --input - --output " + tmp.file("o.txt") + " < " + raw +
                                     " && cat " + tmp.file("o.txt")}) {
    CAPTURE(cmd);
    const CliResult r = run_bash(cmd);
    CHECK(r.code == 0);
    CHECK(r.out == from_file.out);
    CHECK(unknown_count(r.err) == 1);
  }
  // Raw text taken as tokenised: "Datei" and "öffnen." are no words of the corpus.
  const CliResult untokenised = run_bash(base + " --tokenized < " + raw);
  CHECK(untokenised.code == 0);
  CHECK(unknown_count(untokenised.err) >= 6);
}

TEST_CASE("translate: a model file without a tokenisation record takes tokenised input, as before") {
  TempDir tmp("translate_old");
  const std::string corpus = tmp.file("words"), model = tmp.file("m.safetensors"), old = tmp.file("old.safetensors");
  write_raw_corpus(corpus);
  REQUIRE(run_lava(train_tiny(corpus, model)).code == 0);
  LoadedNmt m = load_nmt(model);
  save_nmt(old, *m.model, m.src_vocab, m.tgt_vocab, {});  // the metadata of a file from before the record
  CHECK_FALSE(load_nmt(old).tokenization.recorded());
  const std::string raw = tmp.file("raw.txt");
  write_text(raw, "Datei öffnen.\nordner löschen .\n");
  const CliResult as_is = run_bash(lava_bin() + " translate --beam 2 --model " + old + " < " + raw);
  const CliResult tokenized = run_bash(lava_bin() + " translate --beam 2 --tokenized --model " + model + " < " + raw);
  CHECK(as_is.code == 0);
  CHECK(as_is.out == tokenized.out);
  CHECK(unknown_count(as_is.err) == 2);
}

TEST_CASE("translate: a model trained on a lava data bpe corpus segments raw text and joins its output") {
  TempDir tmp("translate_bpe");
  const std::string words = tmp.file("words"), bpe = tmp.file("bpe"), model = tmp.file("m.safetensors");
  write_raw_corpus(words);
  REQUIRE(run_lava("data bpe -q --data " + words + " --out " + bpe + " --types 30").code == 0);
  CHECK(read_corpus_tokenization(bpe).words == kLavaWordTokenizer);  // copied from the word corpus
  REQUIRE(run_lava(train_tiny(bpe, model)).code == 0);
  const LoadedNmt loaded = load_nmt(model);
  const std::string model_bytes = read_file(bpe + "/subword.model", kModelLimit);
  CHECK(loaded.tokenization.subword_model == model_bytes);
  CHECK(loaded.metadata.at("subword_model") == base64_encode(model_bytes));

  // The raw line, and its words cut by the corpus's own model as `lava data bpe` cut them, translate alike.
  const SubwordModel subwords = SubwordModel::from_bytes(model_bytes, "subword.model");
  const std::string raw = tmp.file("raw.txt"), pieces = tmp.file("pieces.txt");
  write_text(raw, "Ordner speichern?\nListe öffnen.\n");
  write_text(pieces, subwords.segment_line("ordner speichern ?") + "\n" + subwords.segment_line("liste öffnen .") + "\n");
  CHECK(slurp(pieces).find("@@") != std::string::npos);  // 30 types cut these words
  const CliResult from_raw = run_bash(lava_bin() + " translate --beam 2 --model " + model + " < " + raw);
  const CliResult from_pieces =
      run_lava("translate --beam 2 --tokenized --model " + model + " --input " + pieces);
  CHECK(from_raw.code == 0);
  CHECK(from_raw.out == from_pieces.out);
  CHECK(lines_of(from_raw.out).size() == 2);
  CHECK(from_raw.out.find("@@") == std::string::npos);  // pieces joined into words
  CHECK(unknown_count(from_raw.err) == 0);
}

TEST_CASE("translate: bad input is one line naming it: a missing file, invalid UTF-8 on standard input") {
  TempDir tmp("translate_bad");
  const std::string corpus = tmp.file("words"), model = tmp.file("m.safetensors");
  write_raw_corpus(corpus);
  REQUIRE(run_lava(train_tiny(corpus, model)).code == 0);
  CliResult r = run_lava("translate --model " + model + " --input " + tmp.file("missing.txt"));
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(tmp.file("missing.txt")) != std::string::npos);
  r = run_bash("printf 'Datei öffnen.\\nSeite \\377 löschen\\n' | " + lava_bin() + " translate --model " + model);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("-:2: invalid UTF-8") != std::string::npos);
  r = run_bash("printf 'a b c d e\\n' | " + lava_bin() + " translate --max-tokens 3 --model " + model);
  CHECK(r.code == 1);
  CHECK(r.err.find("-:1: line has 5 tokens") != std::string::npos);
  // The length penalty is --length-penalty; --alpha is lava train's entmax alpha and means nothing here.
  r = run_bash("printf 'datei öffnen .\\n' | " + lava_bin() + " translate --length-penalty 0 --model " + model);
  CHECK(r.code == 0);
  r = run_bash("printf 'datei öffnen .\\n' | " + lava_bin() + " translate --alpha 0 --model " + model);
  CHECK(r.code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("alpha") != std::string::npos);
}

TEST_CASE("translate: a line typed on standard input is answered before the next one is written") {
  TempDir tmp("translate_stream");
  const std::string corpus = tmp.file("words"), model = tmp.file("m.safetensors");
  write_raw_corpus(corpus);
  REQUIRE(run_lava(train_tiny(corpus, model)).code == 0);
  const CliResult whole = run_bash("printf 'Datei öffnen.\\nListe löschen!\\n' | " + lava_bin() +
                                   " translate -q --beam 2 --model " + model);
  REQUIRE(whole.code == 0);
  REQUIRE(lines_of(whole.out).size() == 2);

  int to_child[2], from_child[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(from_child) == 0);
  const std::string bin = lava_bin();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) ::close(fd);
    ::execl(bin.c_str(), bin.c_str(), "translate", "-q", "--beam", "2", "--model", model.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  // Reads until `lines` lines have come, waiting at most two minutes in all.
  std::string got;
  const auto read_lines = [&](size_t lines) {
    for (int waited = 0; lines_of(got).size() < lines || got.back() != '\n';) {
      pollfd p{from_child[0], POLLIN, 0};
      if (::poll(&p, 1, 1000) == 0) {
        if (++waited > 120) return false;
        continue;
      }
      char buf[4096];
      const ssize_t n = ::read(from_child[0], buf, sizeof buf);
      if (n <= 0) return false;
      got.append(buf, size_t(n));
    }
    return true;
  };
  const std::string first = "Datei öffnen.\n", second = "Liste löschen!\n";
  CHECK(::write(to_child[1], first.data(), first.size()) == ssize_t(first.size()));
  const bool answered = read_lines(1);
  CHECK(answered);  // the first line's translation came while standard input was still open
  CHECK(got == lines_of(whole.out)[0] + "\n");
  CHECK(::write(to_child[1], second.data(), second.size()) == ssize_t(second.size()));
  ::close(to_child[1]);
  CHECK(read_lines(2));
  CHECK(got == whole.out);
  ::close(from_child[0]);
  if (!answered) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

TEST_CASE("base64: the RFC 4648 vectors, every length round-trips, and non-canonical text is refused") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foob") == "Zm9vYg==");
  CHECK(base64_encode("fooba") == "Zm9vYmE=");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  std::string bytes;
  for (int k = 0; k < 300; ++k) {
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
    bytes += char((k * 37 + 11) & 0xFF);
  }
  for (const char* bad : {"Zg=", "Zg=a", "Z===", "Zh==", "Zm9=", "Zm9v!A==", "Zg==Zg==", "Zm 9"}) {
    CAPTURE(bad);
    CHECK_FALSE(base64_decode(bad).has_value());
  }
}
