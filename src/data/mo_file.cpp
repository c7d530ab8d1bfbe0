#include "data/mo_file.hpp"

#include <cstdint>

#include "core/check.hpp"
#include "core/read_file.hpp"

namespace lava {

namespace {

constexpr uint32_t kMoMagic = 0x950412deu;
constexpr size_t kHeaderBytes = 28;

uint32_t bswap32(uint32_t x) { return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24); }

// Reads little-endian words and swaps them when the catalog was written big-endian.
struct WordReader {
  std::string_view bytes;
  bool swap = false;
  uint32_t at(size_t offset) const {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data()) + offset;
    uint32_t le = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    return swap ? bswap32(le) : le;
  }
};

std::vector<std::string> split_on_nul(std::string_view s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t nul = s.find('\0', start);
    if (nul == std::string_view::npos) {
      parts.emplace_back(s.substr(start));
      return parts;
    }
    parts.emplace_back(s.substr(start, nul - start));
    start = nul + 1;
  }
}

}  // namespace

MoCatalog parse_mo(std::string_view bytes, const std::string& file_name) {
  auto corrupt = [&](const std::string& what) { return input_error(file_name, 0, "not a valid .mo catalog: " + what); };
  if (bytes.size() < kHeaderBytes)
    throw corrupt(fmt::format("{} bytes, shorter than the 28-byte header", bytes.size()));
  WordReader word{bytes, false};
  uint32_t magic = word.at(0);
  if (magic == bswap32(kMoMagic)) {
    word.swap = true;
  } else if (magic != kMoMagic) {
    throw corrupt(fmt::format("bad magic number 0x{:08x}", magic));
  }
  uint32_t revision = word.at(4);
  if ((revision >> 16) > 1) throw corrupt(fmt::format("unknown major revision {}", revision >> 16));
  const uint64_t count = word.at(8), originals = word.at(12), translations = word.at(16);
  // Each table holds `count` pairs of 32-bit words; 64-bit arithmetic so no sum can wrap.
  for (uint64_t table : {originals, translations})
    if (table + count * 8 > bytes.size())
      throw corrupt(fmt::format("string table at offset {} with {} entries runs past the end ({} bytes)", table, count,
                                bytes.size()));

  auto string_at = [&](uint64_t table, uint64_t index) -> std::string_view {
    uint64_t length = word.at(table + 8 * index), offset = word.at(table + 8 * index + 4);
    if (offset + length > bytes.size())
      throw corrupt(fmt::format("string {} (offset {}, length {}) runs past the end ({} bytes)", index, offset, length,
                                bytes.size()));
    return bytes.substr(offset, length);
  };

  MoCatalog catalog;
  auto& entries = catalog.entries;
  entries.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view original = string_at(originals, i);
    std::string_view translated = string_at(translations, i);
    if (original.empty()) {  // the catalog header
      catalog.header = std::string(translated);
      continue;
    }
    MoEntry entry;
    if (auto eot = original.find('\x04'); eot != std::string_view::npos) {
      entry.context = std::string(original.substr(0, eot));
      original.remove_prefix(eot + 1);
    }
    entry.msgid = split_on_nul(original);
    entry.msgstr = split_on_nul(translated);
    entries.push_back(std::move(entry));
  }
  return catalog;
}

MoCatalog read_mo_file(const std::string& path) { return parse_mo(read_file(path, kTextDataLimit), path); }

std::string mo_charset(const MoCatalog& catalog) {
  constexpr std::string_view kKey = "charset=";
  auto at = catalog.header.find(kKey);
  if (at == std::string::npos) return "";
  std::string charset;
  for (size_t k = at + kKey.size(); k < catalog.header.size(); ++k) {
    char c = catalog.header[k];
    if (c == ';' || c == '\n' || c == ' ' || c == '\r') break;
    charset += (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  }
  return charset;
}

}  // namespace lava
