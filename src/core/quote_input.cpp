#include "core/quote_input.hpp"

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace lava {

namespace {

// Appends the escaped form of text[pos...] up to `limit` output bytes; returns the input position reached.
size_t append_escaped(std::string& out, std::string_view text, size_t limit, char quote) {
  size_t pos = 0;
  while (pos < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos]);
    std::string piece;
    size_t used = 1;
    if (c == '\n') piece = "\\n";
    else if (c == '\t') piece = "\\t";
    else if (c == '\r') piece = "\\r";
    else if (c == '\\' && quote) piece = "\\\\";
    else if (quote && c == static_cast<unsigned char>(quote)) piece = std::string("\\") + quote;
    else if (c < 0x20 || c == 0x7F) piece = fmt::format("\\x{:02x}", c);
    else if (c < 0x80) piece = std::string(1, char(c));
    else if (size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(text.data()) + pos,
                                             text.size() - pos)) {
      piece = std::string(text.substr(pos, n));
      used = n;
    } else {
      piece = fmt::format("\\x{:02x}", c);
    }
    if (out.size() + piece.size() > limit) break;
    out += piece;
    pos += used;
  }
  return pos;
}

}  // namespace

std::string quote_input(std::string_view text, char quote) {
  std::string out(1, quote);
  const size_t reached = append_escaped(out, text, kQuoteMaxBytes + 1, quote);
  if (reached == text.size()) return out + quote;
  return fmt::format("{}...{} ({} bytes)", out, quote, text.size());
}

std::string one_line(std::string_view message, size_t max_bytes) {
  std::string out;
  const size_t reached = append_escaped(out, message, max_bytes, '\0');
  if (reached < message.size()) out += fmt::format("... ({} bytes in all)", message.size());
  return out;
}

}  // namespace lava
