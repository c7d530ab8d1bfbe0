#pragma once
// Input echoed in an error message (a key, a token, a line, an option value) goes through quote_input, so that a
// message stays one short line whatever the input holds: control characters, DEL and bytes that are not UTF-8 are
// written as escapes (\n, \t, \r, \\, \xNN), and anything past kQuoteMaxBytes is cut, with the input's full length
// given. The quote character itself is escaped too, so the quoted text's end is unambiguous.
#include <cstddef>
#include <string>
#include <string_view>

namespace lava {

inline constexpr size_t kQuoteMaxBytes = 200;

// 'text' (or "text" with quote = '"'), escaped and cut: e.g. 'a\nb', 'xxxx...' (100000 bytes).
std::string quote_input(std::string_view text, char quote = '\'');

// A whole message made one line: the escapes above applied to every control character, nothing cut but the total
// length beyond max_bytes (main() applies it to every message it prints, a backstop for any echo not quoted).
std::string one_line(std::string_view message, size_t max_bytes = 2000);

}  // namespace lava
