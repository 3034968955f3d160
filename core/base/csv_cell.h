// One CSV cell of text, safe to open in a spreadsheet (docs/reliability.md, "CSV output").
#pragma once

#include <string>
#include <string_view>

namespace kcx {

// Text from a file (a sequence id, token text, a slice value) as one CSV cell:
// - a cell that a spreadsheet would run as a formula, one starting with = + - @, a tab or
//   a carriage return, gets a leading single quote (OWASP "CSV injection"): "=HYPERLINK(...)"
//   is written '=HYPERLINK(...);
// - text that is a plain decimal number ("-5", "+1.5e3") stays as it is: a number is not a
//   formula, and a spreadsheet shows it as the same number;
// - then RFC 4180 quoting when the cell holds a comma, a quote or a line break.
std::string csvTextCell(std::string_view text);

// True when `text` is a plain decimal number: [+-]digits[.digits][(e|E)[+-]digits].
bool isPlainNumber(std::string_view text);

}  // namespace kcx
