// Text from files printed to a terminal as text. A reviewer name, clause id, slice value
// or file name can hold a newline, ESC (terminal control sequences: hide, move the cursor,
// rewrite a line) or bidi controls that reorder what is shown. printable() escapes them, so
// `kcx verify` cannot be made to print a fake "ok … verified" line or hide a real one.
#pragma once

#include <string>
#include <string_view>

namespace kcx {

// Escapes, in valid UTF-8 text:
//  - C0 controls and DEL: \n \r \t as such, the rest as \xNN (ESC is \x1b);
//  - C1 controls (U+0080..U+009F) and the bidi and invisible format characters
//    (U+061C, U+200B..U+200F, U+202A..U+202E, U+2060..U+2069, U+FEFF) as \u{XXXX};
//  - every byte that is not part of valid UTF-8 as \xNN;
//  - the backslash itself as \\ only when `escapeBackslash` (so that the escapes cannot be
//    forged); off by default, since Windows-style paths would become hard to read.
// Everything else (printable ASCII, letters of any script, emoji) is kept as it is.
std::string printable(std::string_view text, bool escapeBackslash = false);

// True when printable(text) == text (nothing to escape).
bool isPrintable(std::string_view text);

}  // namespace kcx
