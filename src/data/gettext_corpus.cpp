#include "data/gettext_corpus.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "data/ascii_chars.hpp"
#include "data/debian_packages.hpp"
#include "data/text_clean.hpp"
#include "data/corpus_tokenization.hpp"
#include "data/tokenize.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

std::string latin1_to_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) append_utf8(out, char32_t(uint8_t(c)));
  return out;
}

size_t count_lines(const std::string& path) {
  std::string text = read_file(path);
  return size_t(std::count(text.begin(), text.end(), '\n'));
}

// The catalogs of one unpacked package for `lang`, in path order; symlinks (aliases of another catalog) and the
// excluded iso-codes catalogs are left out.
std::vector<std::string> catalogs_in(const std::string& root, const std::string& lang) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& p = it->path();
    if (it->is_symlink() || !it->is_regular_file() || p.extension() != ".mo") continue;
    if (p.parent_path().filename() != "LC_MESSAGES" || p.parent_path().parent_path().filename() != lang) continue;
    if (is_excluded_catalog(p.filename().string())) continue;
    files.push_back(p.string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Split split_of(std::string_view source_sentence, uint64_t seed) {
  // FNV-1a over the seed's 8 bytes and the sentence, then the SplitMix64 finaliser so every bit of the hash
  // depends on every input byte before the bucket (h mod 1000) is taken.
  uint64_t h = 0xcbf29ce484222325ull;
  for (int k = 0; k < 8; ++k) h = (h ^ ((seed >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  for (char c : source_sentence) h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  h ^= h >> 30, h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27, h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  uint64_t bucket = h % 1000;
  return bucket < 25 ? Split::valid : bucket < 50 ? Split::test : Split::train;
}

size_t GettextPairs::add_message(std::string_view foreign, std::string_view english, int package) {
  size_t added = 0;
  for (const TextPair& text : clean_message(foreign, english)) {
    if (!is_valid_utf8(text.src) || !is_valid_utf8(text.tgt)) continue;
    std::vector<std::string> src = tokenize(text.src), tgt = tokenize(text.tgt);
    if (!keep_token_pair(src, tgt, min_tokens_, max_tokens_)) continue;
    Pair pair{join_tokens(src), join_tokens(tgt), package};
    if (!seen_.insert(pair.src + '\t' + pair.tgt).second) continue;
    pairs_.push_back(std::move(pair));
    ++added;
  }
  return added;
}

size_t GettextPairs::add_catalog(const MoCatalog& catalog, int package) {
  const std::string charset = mo_charset(catalog);
  const bool latin1 = charset == "iso-8859-1" || charset == "iso-8859-15" || charset == "latin1" ||
                      charset == "iso8859-1" || charset == "iso8859-15";
  size_t added = 0;
  for (const MoEntry& entry : catalog.entries) {
    const size_t forms = std::min(entry.msgid.size(), entry.msgstr.size());
    for (size_t k = 0; k < forms; ++k) {
      if (entry.msgstr[k].empty()) continue;  // untranslated
      if (latin1)
        added += add_message(latin1_to_utf8(entry.msgstr[k]), latin1_to_utf8(entry.msgid[k]), package);
      else
        added += add_message(entry.msgstr[k], entry.msgid[k], package);
    }
  }
  return added;
}

GettextSummary build_gettext_corpus(const GettextOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string& lang = options.lang;
  if (lang.empty() || lang == "en" || !std::all_of(lang.begin(), lang.end(), [](char c) {
        return ascii_alpha(c) || c == '_' || c == '@';
      }))
    throw UsageError(
        fmt::format("--lang: {} is not a gettext language code other than en (e.g. de, fr, pt_BR)", quote_input(lang)));
  if (options.out_dir.empty()) throw UsageError("--out: an output folder is required");
  if (options.min_tokens < 1 || options.max_tokens < options.min_tokens)
    throw UsageError(fmt::format("token limits {}..{}: need 1 <= min <= max", options.min_tokens, options.max_tokens));

  const std::string& out = options.out_dir;
  const std::array<std::string, 3> split_names = {"train", "valid", "test"};
  const std::string manifest = out + "/manifest.tsv";
  auto file_of = [&](size_t split, const std::string& side) {
    return fmt::format("{}/{}.{}", out, split_names[split], side);
  };

  GettextSummary summary;
  bool all_there = fs::exists(manifest);
  for (size_t s = 0; s < 3; ++s) all_there = all_there && fs::exists(file_of(s, lang)) && fs::exists(file_of(s, "en"));
  if (all_there) {
    summary.cached = true;
    summary.train = count_lines(file_of(0, lang));
    summary.valid = count_lines(file_of(1, lang));
    summary.test = count_lines(file_of(2, lang));
    summary.packages = count_lines(manifest) - 1;
    if (!options.quiet) fmt::print(stderr, "gettext: {} is already built (manifest.tsv present); nothing to do\n", out);
    summary.seconds = seconds_since(start);
    return summary;
  }

  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw input_error(out, 0, "cannot create the output folder: " + ec.message());
  // The default cache sits beside the output folder, so corpora for other languages share the downloads.
  const std::string cache = options.cache_dir.empty()
                                ? (fs::path(out).lexically_normal().parent_path() / "debian-cache").string()
                                : options.cache_dir;
  const std::vector<std::string> names = options.packages.empty() ? gettext_package_names(lang) : options.packages;
  const std::vector<DebFile> debs = fetch_debs(names, cache + "/debs", options.quiet);
  if (debs.empty()) throw InputError("gettext: no package could be fetched");
  if (!options.quiet)
    fmt::print(stderr, "gettext: {} packages ready after {:.1f} s\n", debs.size(), seconds_since(start));

  const std::vector<std::string> patterns = {"*/" + lang + "/LC_MESSAGES/*.mo"};
  GettextPairs pairs(options.min_tokens, options.max_tokens);
  std::vector<size_t> contributed(debs.size(), 0);
  for (size_t i = 0; i < debs.size(); ++i) {
    const std::string root = extract_deb(debs[i], patterns, cache + "/unpacked-" + lang);
    for (const std::string& file : catalogs_in(root, lang)) {
      try {
        contributed[i] += pairs.add_catalog(read_mo_file(file), int(i));
      } catch (const InputError& e) {
        fmt::print(stderr, "gettext: warning: skipping a catalog: {}\n", e.what());
      }
    }
    if (!options.quiet)
      fmt::print(stderr, "gettext: [{}/{}] {} {}: {} pairs (total {}, {:.1f} s)\n", i + 1, debs.size(), debs[i].package,
                 debs[i].version, contributed[i], pairs.pairs().size(), seconds_since(start));
  }

  // Split by a hash of the source sentence, keeping the catalog order within each split.
  std::array<std::string, 3> src_text, tgt_text;
  std::array<size_t, 3> count = {0, 0, 0};
  for (const auto& pair : pairs.pairs()) {
    size_t s = size_t(split_of(pair.src, options.seed));
    src_text[s] += pair.src + '\n';
    tgt_text[s] += pair.tgt + '\n';
    ++count[s];
  }
  for (size_t s = 0; s < 3; ++s) {
    write_file_atomic(file_of(s, lang), src_text[s]);
    write_file_atomic(file_of(s, "en"), tgt_text[s]);
  }
  std::string manifest_text = "package\tversion\tpairs\n";
  for (size_t i = 0; i < debs.size(); ++i)
    manifest_text += fmt::format("{}\t{}\t{}\n", debs[i].package, debs[i].version, contributed[i]);
  write_tokenizer_record(out, kLavaWordTokenizer);  // how raw text becomes these tokens (data/corpus_tokenization.hpp)
  write_file_atomic(manifest, manifest_text);  // last: its presence marks a finished build

  summary.train = count[0], summary.valid = count[1], summary.test = count[2];
  summary.packages = debs.size();
  summary.seconds = seconds_since(start);
  if (!options.quiet)
    fmt::print(stderr, "gettext: wrote {}: {} train, {} valid, {} test pairs from {} packages in {:.1f} s\n", out,
               summary.train, summary.valid, summary.test, summary.packages, summary.seconds);
  return summary;
}

}  // namespace lava
