#pragma once
// Cleaning of software message text (gettext catalogs) into sentence pairs, following data-notes.md:
// accelerators, markup and format specifiers go; wrapped lines are joined; a multi-line message is split into
// segment pairs only where both sides have the same number of segments (else dropped); leading --help option
// syntax goes; sentences are split only where both sides give the same count; white space is normalised.
// Tokenisation and the token-level filters (keep_token_pair) come after this, see tokenize.hpp.
#include <string>
#include <string_view>
#include <vector>

namespace lava {

// Menu mnemonics: "_Datei" / "Ö_ffnen" (GTK), "&File" (Qt/KDE, "&&" is a literal "&"), "~Datei" (LibreOffice).
// A marker is removed only when it occurs exactly once and precedes a letter or digit, so identifiers such as
// "XDG_CONFIG_HOME", paths such as "~/.config" and HTML entities such as "&amp;" survive.
std::string strip_accelerators(std::string_view text);

// Markup tags "<b>", "</span>", "<a href=...>", "<br/>" (lower-case names only, so placeholders like "<FILE>"
// stay) are dropped: inline tags (b, i, span, a, ...) vanish, block tags become a space.
std::string drop_tags(std::string_view text);

// "&amp;", "&lt;", "&#228;", "&#xE4;", "&nbsp;" and the other common named entities -> UTF-8. Unknown or
// malformed entities are left as they are.
std::string html_unescape(std::string_view text);

// printf ("%s", "%1$d", "%-10.3lf", "%'d"; "%%" -> "%"), Python ("%(name)s", "{0}", "{name}", "{}"), Qt/KDE ("%1"),
// "$VAR$" and "${VAR}". Quote or bracket pairs left empty by the removal ("'%s'" -> "''") go too.
std::string strip_format_specifiers(std::string_view text);

// Lines -> segments: an indented line that does not start an option ("-x") continues the previous line, as does
// a line after one that does not end in . : ! ? ; (unless it starts with an option or a bullet). Empty lines
// separate paragraphs and are dropped. The joined text keeps its internal spacing (for strip_option_syntax).
std::vector<std::string> split_segments(std::string_view text);

// "  -a, --all            do not ignore entries" -> "do not ignore entries": a segment that starts with an option
// loses everything up to the first gap of two or more spaces (or a tab). Without a gap it is left as it is.
std::string strip_option_syntax(std::string_view segment);

// Tabs, newlines, no-break and other Unicode spaces -> one ASCII space; soft hyphens and zero-width characters
// removed; leading and trailing space trimmed.
std::string normalize_space(std::string_view text);

// Sentence boundaries: . ! ? (or …), optionally followed by closing quotes or brackets, then white space and an
// upper-case letter, a digit or an opening quote. Normalised text in, trimmed sentences out.
std::vector<std::string> split_sentences(std::string_view text);

// The whole pipeline for one message: source and target text in, cleaned (not yet tokenised) pairs out.
struct TextPair {
  std::string src, tgt;
};
std::vector<TextPair> clean_message(std::string_view src, std::string_view tgt);

}  // namespace lava
