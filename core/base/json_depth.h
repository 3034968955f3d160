// Bounded JSON: a cheap pre-scan that refuses nesting too deep before nlohmann/json turns
// the text into a tree. nlohmann parses without recursion but copies, compares and
// serialises a tree recursively, so a 10^6-deep array in a metadata string ran the stack
// out (issue 16, case 5). Every JSON text that becomes a tree passes through here first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kcx {

// The deepest JSON a tree may hold. KCX's own JSON (metadata, records, keys, import
// lines, contracts) is at most about 6 levels deep. docs/reliability.md lists it.
inline constexpr int kMaxJsonDepth = 64;

// The byte offset of the first '[' or '{' outside a string that opens level maxDepth + 1;
// npos when the text never nests deeper than maxDepth. It does not check the syntax:
// the parser that follows does.
size_t jsonDepthExceeded(std::string_view text, int maxDepth = kMaxJsonDepth);

// "JSON nested deeper than 64 levels": the shared wording of the refusal.
std::string jsonDepthMessage(int maxDepth = kMaxJsonDepth);

}  // namespace kcx
