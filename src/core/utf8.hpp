#pragma once
// The UTF-8 toolkit (RFC 3629) shared by the JSON reader and writer, the tokeniser, the corpus readers and SVG text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lava {

// Decodes the code point at `pos` and advances past it. A malformed, overlong, surrogate or truncated sequence
// yields U+FFFD and advances by one byte, so every input terminates.
char32_t next_codepoint(std::string_view text, size_t& pos);
void append_utf8(std::string& out, char32_t cp);
bool is_valid_utf8(std::string_view text);
// Byte offset of the first malformed sequence, or npos. Text readers reject such a line with file:line: decoding it
// as U+FFFD would make two readers of the same file see different words.
size_t first_invalid_utf8(std::string_view text);
// Length of the well-formed sequence at p (`avail` bytes readable), or 0 if the bytes there are not one.
size_t utf8_sequence_length(const unsigned char* p, size_t avail);

}  // namespace lava
