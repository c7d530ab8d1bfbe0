#pragma once
// Debian packages as a data source: the pinned package list for the gettext corpus, `apt-get download` into a
// cache folder (no install, no root needed), and extraction of selected members with dpkg-deb and tar.
#include <string>
#include <string_view>
#include <vector>

namespace lava {

// The pinned list of packages whose gettext catalogs (and nothing else) make the translation corpus, in the order
// their pairs are taken (earlier packages win duplicates). `lang` fills in language-specific package names
// ("libreoffice-l10n-de"); every other package ships all languages.
std::vector<std::string> gettext_package_names(const std::string& lang);

// Catalogs of a package that are left out: near-identical proper names (iso-codes' ISO 639-3/-5, 3166-2, 15924).
bool is_excluded_catalog(std::string_view mo_file_name);

struct DebFile {
  std::string package;  // "coreutils"
  std::string version;  // "9.1-1" (epoch included: "1:2.39.5-0+deb12u3")
  std::string path;     // DEB_DIR/coreutils_9.1-1_amd64.deb
};

// Makes sure DEB_DIR holds a .deb of every named package, running `apt-get download` (in DEB_DIR) for those that
// are missing; a .deb already there is reused, so the cache pins the versions. Packages apt cannot provide are
// skipped with a warning on stderr (Debian renames packages between releases). Throws InputError when apt-get is
// missing or when more than half of the missing packages fail to download.
std::vector<DebFile> fetch_debs(const std::vector<std::string>& packages, const std::string& deb_dir, bool quiet);

// Extracts the members of `deb` whose path matches one of the tar `patterns` ("*/de/LC_MESSAGES/*.mo") into a
// folder of its own under `unpack_root`, once: a marker file records a finished extraction. Returns that folder.
// A package with no matching member gives an empty folder. Throws InputError naming the .deb when it is corrupt.
std::string extract_deb(const DebFile& deb, const std::vector<std::string>& patterns, const std::string& unpack_root);

// Single-quotes `arg` for /bin/sh.
std::string shell_quote(std::string_view arg);

}  // namespace lava
