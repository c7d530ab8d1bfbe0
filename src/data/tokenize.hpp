#pragma once
// Word tokeniser for the translation corpora (UTF-8 decoding is in core/utf8.hpp).
//
// tokenize("Die Option --block-size=1,5 gilt für E-Mail-Adressen (siehe z.B. Hilfe).")
//   -> die option --block-size = 1,5 gilt für e-mail-adressen ( siehe z . b . hilfe ) .
// Rules: lower-case everything; keep command-line options ("-l", "--all", "--block-size") whole when they start a
// word; keep hyphenated compounds ("e-mail-adresse"), a word's trailing hyphen ("datei- und ordnernamen"),
// apostrophes inside words ("don't") and numbers with inner separators ("1,5", "10.000", "2.39.5") whole; a run of
// dots is one token ("..."); every other punctuation or symbol character is a token of its own.
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.hpp"

namespace lava {

// Character classes. Word characters are letters, digits and '_'; letters outside ASCII are every code point from
// U+00C0 on except the symbol and punctuation blocks (×, ÷, U+2000-U+2BFF, U+3000-U+303F, ...).
bool is_word_char(char32_t cp);
bool is_letter(char32_t cp);
bool is_upper(char32_t cp);
bool is_space(char32_t cp);      // ASCII white space and the Unicode space characters (no-break, thin, ideographic...)
char32_t to_lower(char32_t cp);  // Latin-1, Latin Extended-A, Greek, Cyrillic, capital sharp s
std::string lowercase(std::string_view text);

std::vector<std::string> tokenize(std::string_view text);
std::string join_tokens(const std::vector<std::string>& tokens);  // space-separated

// Token-level filters: each side has min_tokens..max_tokens tokens; when the longer side has more than 4 tokens the
// length ratio is at most 2; the two sides differ; each side has at least one letter.
bool keep_token_pair(const std::vector<std::string>& src, const std::vector<std::string>& tgt, int min_tokens,
                     int max_tokens);

}  // namespace lava
