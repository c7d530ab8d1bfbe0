#include "data/debian_packages.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/atomic_file.hpp"
#include "core/check.hpp"

namespace lava {

namespace fs = std::filesystem;

namespace {

// Exit status of a /bin/sh command line, or -1 when it did not exit normally.
int run_shell(const std::string& command) {
  int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

std::string read_or_empty(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  try {
    return read_file(path);
  } catch (const InputError&) {
    return "";
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    if (nl > start) lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// apt-get download names files PACKAGE_VERSION_ARCH.deb, with the epoch colon written "%3a".
std::map<std::string, DebFile> debs_in(const std::string& deb_dir) {
  std::map<std::string, DebFile> found;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(deb_dir, ec)) {
    std::string name = item.path().filename().string();
    if (!item.is_regular_file() || !name.ends_with(".deb")) continue;
    size_t a = name.find('_'), b = name.rfind('_');
    if (a == std::string::npos || b == a) continue;
    std::string version;
    for (size_t k = a + 1; k < b; ++k) {
      if (name.compare(k, 3, "%3a") == 0) {
        version += ':';
        k += 2;
      } else {
        version += name[k];
      }
    }
    DebFile deb{name.substr(0, a), version, item.path().string()};
    // Several versions of one package: the greatest file name wins, so the choice does not depend on listing order.
    auto it = found.find(deb.package);
    if (it == found.end() || it->second.path < deb.path) found[deb.package] = deb;
  }
  return found;
}

}  // namespace

std::string shell_quote(std::string_view arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

bool is_excluded_catalog(std::string_view mo_file_name) {
  return mo_file_name == "iso_639-3.mo" || mo_file_name == "iso_639_3.mo" || mo_file_name == "iso_3166-2.mo" ||
         mo_file_name == "iso_3166_2.mo" || mo_file_name == "iso_639-5.mo" || mo_file_name == "iso_639_5.mo" ||
         mo_file_name == "iso_15924.mo";
}

std::vector<DebFile> fetch_debs(const std::vector<std::string>& packages, const std::string& deb_dir_arg,
                                bool quiet) {
  std::error_code ec;
  // Absolute, because the download runs `cd DIR && apt-get download ... > DIR/apt-get.log`: a relative DIR would
  // name the log relative to itself after the cd (`make data` passed data/debian-cache and every download failed).
  const std::string deb_dir = fs::absolute(deb_dir_arg, ec).string();
  if (ec) throw input_error(deb_dir_arg, 0, "cannot resolve the download folder: " + ec.message());
  fs::create_directories(deb_dir, ec);
  if (ec) throw input_error(deb_dir, 0, "cannot create the download folder: " + ec.message());
  auto have = debs_in(deb_dir);
  std::vector<std::string> missing;
  for (const auto& p : packages)
    if (!have.count(p)) missing.push_back(p);

  if (!missing.empty()) {
    if (run_shell("command -v apt-get >/dev/null 2>&1") != 0)
      throw InputError("apt-get not found: downloading the Debian packages needs a Debian system with apt-get");
    const std::string log = deb_dir + "/apt-get.log";
    if (!quiet) fmt::print(stderr, "gettext: downloading {} packages with apt-get (log: {})\n", missing.size(), log);
    auto download = [&](const std::vector<std::string>& names, const char* redirect) {
      std::string cmd = "cd " + shell_quote(deb_dir) + " && apt-get download -q";
      for (const auto& n : names) cmd.append(" ").append(shell_quote(n));
      cmd.append(" ").append(redirect).append(" ").append(shell_quote(log)).append(" 2>&1");
      return run_shell(cmd);
    };
    // One call for all (fast); if apt refuses one name the whole call fails, so then try one by one.
    if (download(missing, ">") != 0) {
      have = debs_in(deb_dir);
      for (const auto& p : missing)
        if (!have.count(p)) download({p}, ">>");
    }
    have = debs_in(deb_dir);
    std::vector<std::string> failed;
    for (const auto& p : missing)
      if (!have.count(p)) failed.push_back(p);
    if (!failed.empty()) {
      std::string last_error;
      for (const auto& line : lines_of(read_or_empty(log)))
        if (line.starts_with("E:")) last_error = line;
      if (failed.size() * 2 > missing.size())
        throw InputError(fmt::format(
            "apt-get download failed for {} of {} packages (first: {}); apt said: {} (log: {})", failed.size(),
            missing.size(), failed.front(), last_error.empty() ? "nothing" : last_error, log));
      for (const auto& p : failed)
        fmt::print(stderr, "gettext: warning: skipping {}: apt-get cannot download it (log: {})\n", p, log);
    }
  }
  std::vector<DebFile> out;
  for (const auto& p : packages)
    if (auto it = have.find(p); it != have.end()) out.push_back(it->second);
  return out;
}

std::string extract_deb(const DebFile& deb, const std::vector<std::string>& patterns, const std::string& unpack_root) {
  const std::string dir = unpack_root + "/" + deb.package;
  const std::string marker = dir + "/.lava-extracted";
  std::string expected = deb.version + "\n";
  for (const auto& p : patterns) expected += p + "\n";
  if (read_or_empty(marker) == expected) return dir;

  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) throw input_error(dir, 0, "cannot create the unpack folder: " + ec.message());
  const std::string dpkg_err = dir + "/.dpkg-deb.err", dpkg_status = dir + "/.dpkg-deb.status",
                    tar_err = dir + "/.tar.err";
  // Both exit statuses are needed and /bin/sh has no pipefail, so dpkg-deb's goes to a file.
  std::string cmd = "{ dpkg-deb --fsys-tarfile " + shell_quote(deb.path) + " 2>" + shell_quote(dpkg_err) +
                    "; echo $? >" + shell_quote(dpkg_status) + "; } | tar -x -C " + shell_quote(dir) +
                    " --no-same-owner --wildcards";
  for (const auto& p : patterns) cmd.append(" ").append(shell_quote(p));
  cmd.append(" 2>").append(shell_quote(tar_err));
  int tar_rc = run_shell(cmd);
  const std::string dpkg_rc = read_or_empty(dpkg_status);
  const auto dpkg_lines = lines_of(read_or_empty(dpkg_err)), tar_lines = lines_of(read_or_empty(tar_err));
  for (const auto& f : {dpkg_err, dpkg_status, tar_err}) fs::remove(f, ec);

  // tar exits 2 when a pattern matched nothing; that only means the package has no such files.
  bool tar_ok = tar_rc == 0 || (tar_rc == 2 && std::all_of(tar_lines.begin(), tar_lines.end(), [](const auto& l) {
                                  return l.find("Not found in archive") != std::string::npos ||
                                         l.find("Exiting with failure status") != std::string::npos;
                                }));
  if (!tar_ok)
    throw input_error(deb.path, 0, "cannot unpack: " + (tar_lines.empty() ? "tar failed" : tar_lines.front()));
  if (dpkg_rc != "0\n")
    throw input_error(deb.path, 0,
                      "not a readable .deb: " + (dpkg_lines.empty() ? "dpkg-deb failed" : dpkg_lines.front()));
  write_file_atomic(marker, expected);
  return dir;
}

std::vector<std::string> gettext_package_names(const std::string& lang) {
  // The 100 packages that gave the most new German-English pairs on Debian 12 (bookworm), out of 202 candidates
  // with catalogs, most productive first: 244 MB of .deb files, about 186k pairs in all (the other 102 packages
  // would add only 10k). Left out on purpose: gcc-12-locales (15k diagnostics full of GCC's own directives,
  // "%qD", "%<...%>"), aptitude-common ("%Bkeep%b" markup), blender-data (stale German catalog), the large game
  // and documentation packages (supertuxkart, widelands, wesnoth, kstars: 80-600 MB each for a few thousand pairs).
  std::vector<std::string> names = {
      "libreoffice-l10n-{lang}",
      "inkscape",
      "freeciv-data",
      "gimp-data",
      "digikam-data",
      "postgresql-15",
      "gramps",
      "vlc-l10n",
      "git",
      "gnucash-common",
      "fontforge-common",
      "evolution-common",
      "util-linux-locales",
      "darktable",
      "audacity-data",
      "cinnamon-l10n",
      "claws-mail-i18n",
      "gnumeric-common",
      "libgtk-3-common",
      "vim-runtime",
      "pidgin-data",
      "libgphoto2-l10n",
      "k3b-i18n",
      "grisbi-common",
      "gnupg-l10n",
      "coreutils",
      "network-manager",
      "filezilla-common",
      "minetest-data",
      "hugin-data",
      "gnome-control-center-data",
      "e2fsprogs-l10n",
      "orca",
      "konversation-data",
      "mutt",
      "libc-l10n",
      "evolution-data-server-common",
      "dpkg",
      "lynx-common",
      "kdenlive-data",
      "libsane-common",
      "libglib2.0-data",
      "shotwell-common",
      "ktorrent-data",
      "hexchat-common",
      "mc-data",
      "geany-common",
      "mypaint-data",
      "libexif12",
      "sudo",
      "gnome-software-common",
      "gnome-builder",
      "brasero-common",
      "cryptsetup-bin",
      "texinfo",
      "gawk",
      "caja-common",
      "bash",
      "thunar-data",
      "system-config-printer-common",
      "rhythmbox-data",
      "gettext",
      "epiphany-browser-data",
      "pan",
      "gnome-disk-utility",
      "xournalpp",
      "dolphin",
      "synaptic",
      "wget",
      "libgweather-4-common",
      "homebank-data",
      "network-manager-gnome",
      "nano",
      "aisleriot",
      "nautilus-data",
      "procps",
      "iso-codes",
      "tar",
      "gftp-common",
      "gedit-common",
      "login",
      "binutils-common",
      "gnote",
      "geary",
      "mate-control-center-common",
      "gnome-settings-daemon-common",
      "pulseaudio",
      "seahorse",
      "libgpg-error-l10n",
      "gnome-shell-common",
      "apt",
      "gnome-panel-data",
      "meld",
      "mate-panel-common",
      "make",
      "xfce4-settings",
      "libgstreamer1.0-0",
      "gnome-terminal-data",
      "kbd",
      "udisks2",
  };
  for (auto& n : names)
    if (auto at = n.find("{lang}"); at != std::string::npos) n.replace(at, 6, lang);
  return names;
}

}  // namespace lava
