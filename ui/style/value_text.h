// Numbers and token texts as the views show them.
#pragma once

#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/formats/run.h"

namespace kcx::ui {

// `precision` significant digits; "missing" for a value that was not logged, "NaN",
// "+inf" or "-inf" for a non-finite one.
QString formatValue(double v, int precision = 6);
// "—" when absent.
QString formatOptional(const std::optional<double>& v, int precision = 4);

// A token's text with invisible characters made visible: space ·, newline ↵, tab ⇥,
// carriage return ␍, other control characters as their Unicode control pictures, and
// an empty token as ∅. Invalid UTF-8 shows as U+FFFD.
QString escapeTokenText(std::string_view text);

// The text of token ids seen in a run (the first place each id was sampled), for the
// top-k lists, whose ids need not occur at their own position. Built in one pass.
class TokenVocab {
public:
    explicit TokenVocab(std::shared_ptr<const Run> run);
    // Empty when the run has no text or the id was never sampled.
    std::optional<std::string_view> text(int32_t id) const;

private:
    std::shared_ptr<const Run> run_;
    std::unordered_map<int32_t, size_t> first_;
};

}  // namespace kcx::ui
