#pragma once
// ASCII character classes for the message-text cleaners (text_clean.cpp, text_markup.cpp) and the --lang check of
// gettext_corpus.cpp: bytes only, so a multi-byte UTF-8 character is never a letter or digit here.

namespace lava {

inline bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
inline bool ascii_alnum(char c) { return ascii_alpha(c) || ascii_digit(c); }

}  // namespace lava
