// Unicode normal form C (NFC) of text from files, by ICU. Two strings that read the same
// may differ in bytes: "Å" is U+00C5, or A + U+030A (combining ring), or U+212B (Angstrom
// sign). Clause ids must be in NFC, so an id is one string of bytes (issue 16).
#pragma once

#include <optional>
#include <string>

namespace kcx {

// `text` (valid UTF-8) in NFC.
std::string toNfc(const std::string& text);

// Where `text` is not in NFC: the first character (counted from 1) that NFC changes and
// what NFC writes there, e.g. "character 1 (U+0041) is U+00C5 in normal form C" for A +
// U+030A; nullopt when `text` is in NFC.
std::optional<std::string> nfcProblem(const std::string& text);

}  // namespace kcx
