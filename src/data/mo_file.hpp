#pragma once
// GNU gettext binary catalogs (.mo), as documented in the GNU gettext manual, "The Format of GNU MO Files":
//
//   offset  0: magic 0x950412de (written in the file's own byte order, so 0xde120495 read natively = swapped)
//   offset  4: file format revision (major << 16 | minor; majors 0 and 1 are understood)
//   offset  8: N, number of strings
//   offset 12: O, offset of the table of original strings   (N entries of {uint32 length, uint32 offset})
//   offset 16: T, offset of the table of translated strings (N entries of {uint32 length, uint32 offset})
//   offset 20: S, size of the hashing table; offset 24: H, its offset (unused here)
//
// A string's length excludes its terminating NUL. Plural entries hold "msgid\0msgid_plural" and
// "msgstr[0]\0msgstr[1]...", and a context is stored as "msgctxt\x04msgid". The entry with an empty msgid is the
// catalog header (metadata), not a message. .mo files never hold fuzzy entries.
#include <string>
#include <string_view>
#include <vector>

namespace lava {

struct MoEntry {
  std::string context;              // msgctxt, empty when there is none
  std::vector<std::string> msgid;   // {singular} or {singular, plural}
  std::vector<std::string> msgstr;  // {translation} or {plural form 0, form 1, ...}
};

struct MoCatalog {
  std::string header;            // msgstr of the empty msgid: "Content-Type: text/plain; charset=UTF-8\n..."
  std::vector<MoEntry> entries;  // every message in table order, the header left out
};

// Throws InputError "FILE: ..." naming `file_name` when the bytes are not a valid .mo file
// (bad magic, unknown major revision, a table or string outside the file).
MoCatalog parse_mo(std::string_view bytes, const std::string& file_name);

// parse_mo on the whole file at `path`.
MoCatalog read_mo_file(const std::string& path);

// The charset named in the header, lower-cased ("utf-8", "iso-8859-1"), or "" when there is none.
std::string mo_charset(const MoCatalog& catalog);

}  // namespace lava
