// Translation data: .mo parsing, cleaning rules, tokenizer, split, and the gettext build end to end on a .deb
// made here (no network: the package is already in the cache, so apt-get is never called).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "data/debian_packages.hpp"
#include "data/gettext_corpus.hpp"
#include "data/mo_file.hpp"
#include "data/text_clean.hpp"
#include "data/tokenize.hpp"

using namespace lava;
namespace fs = std::filesystem;

namespace {

struct MoMessage {
  std::string original, translated;  // raw table strings: may hold "\0" (plurals) and "\x04" (context)
};

// A .mo file as GNU msgfmt lays it out: header, original table, translated table, then the strings.
std::string build_mo(const std::vector<MoMessage>& messages, bool big_endian) {
  std::string out;
  auto word = [&](uint32_t x) {
    for (int k = 0; k < 4; ++k) out += char(big_endian ? (x >> (24 - 8 * k)) & 0xff : (x >> (8 * k)) & 0xff);
  };
  const uint32_t n = uint32_t(messages.size()), originals = 28, translations = 28 + 8 * n;
  word(0x950412de), word(0), word(n), word(originals), word(translations), word(0), word(28 + 16 * n);
  uint32_t at = 28 + 16 * n;
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> orig_table, trans_table;
  for (const auto& m : messages)
    orig_table.push_back({uint32_t(m.original.size()), at + uint32_t(strings.size())}), strings += m.original + '\0';
  for (const auto& m : messages)
    trans_table.push_back({uint32_t(m.translated.size()), at + uint32_t(strings.size())}),
        strings += m.translated + '\0';
  for (auto [len, off] : orig_table) word(len), word(off);
  for (auto [len, off] : trans_table) word(len), word(off);
  return out + strings;
}

const std::vector<MoMessage> kSample = {
    {"", "Content-Type: text/plain; charset=UTF-8\n"},
    {"Open file", "Datei öffnen"},
    {std::string("one file\0%d files", 17), std::string("eine Datei\0%d Dateien", 21)},
    {"menu\x04Quit", "Beenden"},
};

std::string temp_dir(const char* name) {
  fs::path dir = fs::temp_directory_path() / fmt::format("lava-test-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::vector<std::string> toks(const char* text) { return tokenize(text); }

}  // namespace

TEST_CASE("mo: parses both byte orders, plurals, contexts and the header") {
  for (bool big : {false, true}) {
    CAPTURE(big);
    MoCatalog c = parse_mo(build_mo(kSample, big), "sample.mo");
    CHECK(mo_charset(c) == "utf-8");
    REQUIRE(c.entries.size() == 3);
    CHECK(c.entries[0].msgid == std::vector<std::string>{"Open file"});
    CHECK(c.entries[0].msgstr == std::vector<std::string>{"Datei öffnen"});
    CHECK(c.entries[1].msgid == std::vector<std::string>{"one file", "%d files"});
    CHECK(c.entries[1].msgstr == std::vector<std::string>{"eine Datei", "%d Dateien"});
    CHECK(c.entries[2].context == "menu");
    CHECK(c.entries[2].msgid == std::vector<std::string>{"Quit"});
  }
}

TEST_CASE("mo: corrupt catalogs throw InputError naming the file") {
  const std::string good = build_mo(kSample, false);
  auto fails_with = [](const std::string& bytes, const char* part) {
    try {
      parse_mo(bytes, "broken/de.mo");
    } catch (const InputError& e) {
      std::string what = e.what();
      CHECK(what.find("broken/de.mo") != std::string::npos);
      CHECK(what.find(part) != std::string::npos);
      return true;
    }
    return false;
  };
  CHECK(fails_with(good.substr(0, 20), "header"));
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  CHECK(fails_with(bad_magic, "magic"));
  std::string bad_count = good;  // N = 0x40000000: the tables would run far past the end
  bad_count[11] = 0x40;
  CHECK(fails_with(bad_count, "string table"));
  std::string bad_offset = good;  // first translated string's offset -> 0xffffff00
  size_t entry = 28 + 8 * kSample.size() + 4;
  bad_offset[entry + 1] = char(0xff), bad_offset[entry + 2] = char(0xff), bad_offset[entry + 3] = char(0xff);
  CHECK(fails_with(bad_offset, "runs past the end"));
  std::string bad_revision = good;
  bad_revision[6] = 5;  // major revision 5
  CHECK(fails_with(bad_revision, "revision"));
  CHECK_THROWS_AS(read_mo_file("/nonexistent/lava.mo"), InputError);
}

TEST_CASE("mo: every single-byte corruption parses or throws InputError, never crashes") {
  const std::string good = build_mo(kSample, false);
  int rejected = 0;
  for (size_t at = 0; at < good.size(); ++at)
    for (int value : {0x00, 0x7f, 0x80, 0xff}) {
      std::string bytes = good;
      bytes[at] = char(value);
      try {
        parse_mo(bytes, "fuzz.mo");
      } catch (const InputError&) {
        ++rejected;
      }
    }
  CHECK(rejected > 0);
}

TEST_CASE("clean and tokenize survive arbitrary bytes") {
  const std::string alphabet = "%{<&_~@$\n\t.-'\xc3\xe2\x80\xff ab9";
  std::string junk;
  uint32_t x = 12345;
  for (int k = 0; k < 4000; ++k) {
    x = x * 1664525u + 1013904223u;
    junk += alphabet[(x >> 24) % alphabet.size()];
  }
  for (size_t len : {size_t(1), size_t(7), size_t(100), junk.size()}) {
    auto pairs = clean_message(junk.substr(0, len), junk.substr(junk.size() - len));
    for (const auto& p : pairs) CHECK(tokenize(p.src).size() <= p.src.size());
  }
  CHECK(tokenize(junk).size() > 10);
}

TEST_CASE("clean: accelerators") {
  CHECK(strip_accelerators("_Datei") == "Datei");
  CHECK(strip_accelerators("Ö_ffnen") == "Öffnen");
  CHECK(strip_accelerators("&File") == "File");
  CHECK(strip_accelerators("~Datei") == "Datei");
  CHECK(strip_accelerators("&Save && Quit") == "Save & Quit");
  CHECK(strip_accelerators("LC_ALL") == "LC_ALL");
  CHECK(strip_accelerators("XDG_CONFIG_HOME") == "XDG_CONFIG_HOME");
  CHECK(strip_accelerators("~/.config") == "~/.config");
  CHECK(strip_accelerators("Save &amp; Quit") == "Save &amp; Quit");
  CHECK(strip_accelerators("a && b") == "a && b");
}

TEST_CASE("clean: markup and entities") {
  CHECK(drop_tags("<b>Note</b>: text") == "Note: text");
  CHECK(drop_tags("line<br/>next") == "line next");
  CHECK(drop_tags("<a href=\"x.html\">link</a>") == "link");
  CHECK(drop_tags("Usage: cmd <FILE>") == "Usage: cmd <FILE>");
  CHECK(drop_tags("a < b > c") == "a < b > c");
  CHECK(html_unescape("&lt;b&gt; &amp; &quot;x&quot;") == "<b> & \"x\"");
  CHECK(html_unescape("&#228;&#xE4;&auml;") == "äää");
  CHECK(html_unescape("&bogus; & x &#0; &#xD800;") == "&bogus; & x &#0; &#xD800;");
}

TEST_CASE("clean: format specifiers") {
  CHECK(strip_format_specifiers("Cannot open %s now") == "Cannot open  now");
  CHECK(strip_format_specifiers("File '%s' not found") == "File  not found");
  CHECK(strip_format_specifiers("Datei »%s« fehlt") == "Datei  fehlt");
  CHECK(strip_format_specifiers("Glyphe „%s” hat") == "Glyphe  hat");
  CHECK(strip_format_specifiers("%1$d of %2$-10.3lf") == " of ");
  CHECK(strip_format_specifiers("%'d, %lld, %zu, %*d") == ", , , ");
  CHECK(strip_format_specifiers("100%% done") == "100% done");
  CHECK(strip_format_specifiers("%(name)s is %(age)d") == " is ");
  CHECK(strip_format_specifiers("Page {0} of {total}: {}") == "Page  of : ");
  CHECK(strip_format_specifiers("Hello %1 and %L2") == "Hello  and ");
  CHECK(strip_format_specifiers("$HOME$ and ${USER}") == " and ");
  CHECK(strip_format_specifiers("50% of the 50%ige $x") == "50% of the 50%ige $x");
}

TEST_CASE("clean: lines, options, spaces and sentences") {
  CHECK(split_segments("Usage: foo\nbar baz.") == std::vector<std::string>{"Usage: foo bar baz."});
  CHECK(split_segments("First line.\nSecond line.") == std::vector<std::string>{"First line.", "Second line."});
  CHECK(split_segments("Item one\n\nItem two\n") == std::vector<std::string>{"Item one", "Item two"});
  auto help = split_segments("Options:\n  -a, --all    show all\n               entries\n  -b    bold");
  REQUIRE(help.size() == 3);
  CHECK(help[0] == "Options:");
  CHECK(strip_option_syntax(help[1]) == "show all               entries");
  CHECK(strip_option_syntax(help[2]) == "bold");
  CHECK(strip_option_syntax("--version") == "--version");
  CHECK(strip_option_syntax("-1 means unlimited") == "-1 means unlimited");
  CHECK(strip_option_syntax("- item  two") == "- item  two");
  CHECK(normalize_space(" a\t\tb\u00A0c\u00ADd\n ") == "a b cd");
  CHECK(split_sentences("One. Two! Three? four") == std::vector<std::string>{"One.", "Two!", "Three? four"});
  CHECK(split_sentences("Size 1.5 MB. (Done.) 3 left") ==
        std::vector<std::string>{"Size 1.5 MB.", "(Done.)", "3 left"});
}

TEST_CASE("clean: whole messages pair up only where both sides agree") {
  auto two = clean_message("Eins ist gut. Zwei ist besser.", "One is good. Two is better.");
  REQUIRE(two.size() == 2);
  CHECK(two[1].src == "Zwei ist besser.");
  CHECK(two[1].tgt == "Two is better.");
  CHECK(clean_message("Eins. Zwei.", "One, two.").size() == 1);                   // sentence counts differ: kept whole
  CHECK(clean_message("Zeile eins.\nZeile zwei.", "Line one and two.").empty());  // line counts differ: dropped
  CHECK(clean_message("  --footer[=TEXT]   Fußzeile", "  --footer[=TEXT]").empty());
  CHECK(clean_message("Block ist defekt", "@b is bad").empty());  // e2fsck "@b" abbreviation
  CHECK(clean_message("Fehler an a@b.org melden", "Report bugs to a@b.org").size() == 1);
  auto help = clean_message("  -a, --all      _Alle zeigen (%s)", "  -a, --all       show _all (%s)");
  REQUIRE(help.size() == 1);
  CHECK(help[0].src == "Alle zeigen");
  CHECK(help[0].tgt == "show all");
}

TEST_CASE("clean: token filters") {
  auto t = [](std::initializer_list<const char*> words) {
    return std::vector<std::string>(words.begin(), words.end());
  };
  CHECK(keep_token_pair(t({"datei", "öffnen"}), t({"open", "file"}), 1, 50));
  CHECK_FALSE(keep_token_pair(t({"x"}), t({"x"}), 1, 50));                           // identical
  CHECK_FALSE(keep_token_pair(t({"42", "%"}), t({"42", "!"}), 1, 50));               // no letters
  CHECK_FALSE(keep_token_pair(t({"a", "b"}), t({"c", "d", "e"}), 1, 2));             // too long
  CHECK_FALSE(keep_token_pair(t({"a"}), t({"c"}), 2, 50));                           // too short
  CHECK_FALSE(keep_token_pair(t({"a", "b"}), t({"c", "d", "e", "f", "g"}), 1, 50));  // ratio 2.5, longer > 4
  CHECK(keep_token_pair(t({"a"}), t({"c", "d", "e", "f"}), 1, 50));                  // ratio 4 but short
}

TEST_CASE("tokenize: options, compounds, numbers, punctuation, case") {
  CHECK(join_tokens(toks("Die Option --block-size=1,5 gilt für E-Mail-Adressen (siehe z.B. Hilfe).")) ==
        "die option --block-size = 1,5 gilt für e-mail-adressen ( siehe z . b . hilfe ) .");
  CHECK(toks("don't") == std::vector<std::string>{"don't"});
  CHECK(toks("Datei- und Ordnernamen") == std::vector<std::string>{"datei-", "und", "ordnernamen"});
  CHECK(toks("Loading...") == std::vector<std::string>{"loading", "..."});
  CHECK(toks("ÄÖÜ ẞ Ÿ Ω Ж") == std::vector<std::string>{"äöü", "ß", "ÿ", "ω", "ж"});
  CHECK(toks("-l and -5") == std::vector<std::string>{"-l", "and", "-5"});
  CHECK(toks("a - b") == std::vector<std::string>{"a", "-", "b"});
  CHECK(toks("10.000 und 3,14") == std::vector<std::string>{"10.000", "und", "3,14"});
  CHECK(join_tokens(toks("file.txt, »Größe«:")) == "file . txt , » größe « :");
  CHECK(toks("x\xff\xfe y") == std::vector<std::string>{"x", "y"});  // malformed bytes vanish, no crash
  CHECK(toks("").empty());
  CHECK(is_valid_utf8("Größe €"));
  CHECK_FALSE(
      is_valid_utf8("Gr\xf6\xdf"
                    "e"));                 // Latin-1 bytes
  CHECK_FALSE(is_valid_utf8("\xc3"));      // truncated
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));  // overlong '/'
}

TEST_CASE("split: deterministic, about 2.5% valid and 2.5% test, salted by the seed") {
  int count[3] = {0, 0, 0}, moved = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string s = fmt::format("satz nummer {}", k);
    Split a = split_of(s, 7);
    CHECK(a == split_of(s, 7));
    ++count[int(a)];
    moved += (a != split_of(s, 8));
  }
  CHECK(count[1] > 300);
  CHECK(count[1] < 700);
  CHECK(count[2] > 300);
  CHECK(count[2] < 700);
  CHECK(moved > 500);
}

TEST_CASE("gettext: dedup keeps first package; duplicate sources share one split") {
  GettextPairs pairs(1, 50);
  CHECK(pairs.add_message("Datei öffnen", "Open file", 0) == 1);
  CHECK(pairs.add_message("Datei öffnen", "Open file", 1) == 0);
  CHECK(pairs.add_message("Datei öffnen", "Open a file", 1) == 1);
  REQUIRE(pairs.pairs().size() == 2);
  CHECK(pairs.pairs()[0].package == 0);
  CHECK(pairs.pairs()[1].src == "datei öffnen");
  MoCatalog latin1;
  latin1.header = "Content-Type: text/plain; charset=ISO-8859-1\n";
  latin1.entries.push_back({"",
                            {"Size"},
                            {"Gr\xf6\xdf"
                             "e"}});
  latin1.entries.push_back({"", {"Untranslated"}, {""}});
  CHECK(pairs.add_catalog(latin1, 2) == 1);
  CHECK(pairs.pairs().back().src == "größe");
}

TEST_CASE("gettext: end to end on a local .deb, then cached") {
  REQUIRE(std::system("command -v dpkg-deb >/dev/null 2>&1") == 0);
  const std::string dir = temp_dir("gettext");
  const std::string root = dir + "/pkgroot";
  fs::create_directories(root + "/DEBIAN");
  fs::create_directories(root + "/usr/share/locale/de/LC_MESSAGES");
  fs::create_directories(root + "/usr/share/locale/fr/LC_MESSAGES");
  write_file_atomic(root + "/DEBIAN/control",
                    "Package: lava-test-catalog\nVersion: 1:2.0-1\nArchitecture: all\nMaintainer: t <t@t>\n"
                    "Description: test\n");
  std::vector<MoMessage> messages = {{"", "Content-Type: text/plain; charset=UTF-8\n"}};
  for (int k = 0; k < 1500; ++k) {
    messages.push_back({fmt::format("Open file number {} now", k), fmt::format("Datei Nummer {} jetzt öffnen", k)});
    if (k % 3 == 0)
      messages.push_back({fmt::format("Open document {} now", k), fmt::format("Datei Nummer {} jetzt öffnen", k)});
  }
  write_file_atomic(root + "/usr/share/locale/de/LC_MESSAGES/test.mo", build_mo(messages, false));
  write_file_atomic(root + "/usr/share/locale/fr/LC_MESSAGES/test.mo", build_mo(kSample, false));
  fs::create_directories(dir + "/cache/debs");
  const std::string deb = dir + "/cache/debs/lava-test-catalog_1%3a2.0-1_all.deb";
  REQUIRE(std::system(("dpkg-deb --root-owner-group -b " + shell_quote(root) + " " + shell_quote(deb) + " >/dev/null")
                          .c_str()) == 0);

  GettextOptions o;
  o.out_dir = dir + "/out";
  o.cache_dir = dir + "/cache";
  o.packages = {"lava-test-catalog"};
  o.quiet = true;
  GettextSummary s = build_gettext_corpus(o);
  CHECK_FALSE(s.cached);
  CHECK(s.packages == 1);
  CHECK(s.train + s.valid + s.test == 2000);
  CHECK(s.valid > 10);
  CHECK(s.test > 10);
  std::set<std::string> seen[3];
  const char* names[3] = {"train", "valid", "test"};
  for (int k = 0; k < 3; ++k) {
    std::string src = read_file(fmt::format("{}/{}.de", o.out_dir, names[k]));
    std::string tgt = read_file(fmt::format("{}/{}.en", o.out_dir, names[k]));
    CHECK(std::count(src.begin(), src.end(), '\n') == std::count(tgt.begin(), tgt.end(), '\n'));
    for (size_t a = 0, b; (b = src.find('\n', a)) != std::string::npos; a = b + 1) seen[k].insert(src.substr(a, b - a));
  }
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      for (const auto& sentence : seen[a]) CHECK(seen[b].count(sentence) == 0);
  CHECK(seen[0].count("datei nummer 3 jetzt öffnen") + seen[1].count("datei nummer 3 jetzt öffnen") +
            seen[2].count("datei nummer 3 jetzt öffnen") ==
        1);
  CHECK(read_file(o.out_dir + "/manifest.tsv") == "package\tversion\tpairs\nlava-test-catalog\t1:2.0-1\t2000\n");

  GettextSummary again = build_gettext_corpus(o);
  CHECK(again.cached);
  CHECK(again.train == s.train);

  // A corrupt .deb is named in the error; apt-get is not reachable with an empty PATH.
  write_file_atomic(deb, "not a deb");
  fs::remove_all(o.cache_dir + "/unpacked-de");
  fs::remove(o.out_dir + "/manifest.tsv");
  CHECK_THROWS_WITH_AS(build_gettext_corpus(o), doctest::Contains("lava-test-catalog_1%3a2.0-1_all.deb"), InputError);
  std::string path = std::getenv("PATH");
  setenv("PATH", "/nonexistent", 1);
  o.packages = {"lava-no-such-package"};
  CHECK_THROWS_WITH_AS(build_gettext_corpus(o), doctest::Contains("apt-get not found"), InputError);
  setenv("PATH", path.c_str(), 1);
  fs::remove_all(dir);
}
