#pragma once
// `lava data gettext`: a German-English (or other language-English) parallel corpus from the human translations
// in Debian's gettext catalogs (see data-notes.md, "Translation"). The foreign language is the source side,
// English (the msgid) the target side.
//
// Output folder: {train,valid,test}.{LANG,en}, one sentence per line, space-separated lower-cased tokens, and
// manifest.tsv (package, version, pairs contributed) written last, so its presence means a finished build.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "data/mo_file.hpp"

namespace lava {

struct GettextOptions {
  std::string lang = "de";
  std::string out_dir;    // e.g. data/gettext-de-en
  std::string cache_dir;  // CACHE/debs/*.deb, CACHE/unpacked-LANG/PACKAGE/; "" = OUT_DIR/../debian-cache
  uint64_t seed = 1;      // salts the split hash
  int min_tokens = 1, max_tokens = 50;
  bool quiet = false;                 // no progress lines on stderr
  std::vector<std::string> packages;  // "" = the pinned list (gettext_package_names)
};

struct GettextSummary {
  bool cached = false;  // the output was already there; nothing was done
  size_t train = 0, valid = 0, test = 0;
  size_t packages = 0;  // packages that were used
  double seconds = 0;   // wall time of the whole build
};

GettextSummary build_gettext_corpus(const GettextOptions& options);

// Which split a source sentence goes to: a 64-bit hash of (seed, sentence) in 1000 buckets,
// 0..24 valid (2.5%), 25..49 test (2.5%), the rest train. Every pair with this source lands in the same split.
enum class Split { train, valid, test };
Split split_of(std::string_view source_sentence, uint64_t seed);

// The in-memory part of the build: catalogs in, deduplicated tokenised pairs out, with the package that
// contributed each one first.
class GettextPairs {
 public:
  GettextPairs(int min_tokens, int max_tokens) : min_tokens_(min_tokens), max_tokens_(max_tokens) {}
  // Cleans, tokenises, filters and deduplicates every translated message of a catalog; returns the number of new
  // pairs. Plural forms pair up by index. ISO-8859-1/15 catalogs are converted to UTF-8; invalid UTF-8 is dropped.
  size_t add_catalog(const MoCatalog& catalog, int package);
  // One message: foreign text (msgstr) and English text (msgid).
  size_t add_message(std::string_view foreign, std::string_view english, int package);

  struct Pair {
    std::string src, tgt;  // space-separated tokens
    int package;
  };
  const std::vector<Pair>& pairs() const { return pairs_; }

 private:
  int min_tokens_, max_tokens_;
  std::vector<Pair> pairs_;
  std::unordered_set<std::string> seen_;  // "src\ttgt"
};

}  // namespace lava
