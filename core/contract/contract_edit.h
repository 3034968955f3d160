// Writing edited thresholds back into a contract's text in place (issue 4: "Save changes
// only the edited numbers: comments, key order and formatting stay byte-identical").
#pragma once

#include <string>
#include <vector>

#include "core/contract/contract.h"

namespace kcx {

struct ThresholdEdit {
    SourceSpan span;   // where the number stands now (from the parser)
    double value = 0;
};

// The shortest decimal text that reads back as `value` ("0.2", "1e-06", "3"): what the
// window writes for an edited number. Throws std::invalid_argument for NaN or infinity.
std::string formatThreshold(double value);

// Replaces each edited number's bytes, and nothing else. Spans must be known, inside the
// text and not overlap; throws std::invalid_argument naming the line and column otherwise.
std::string applyThresholdEdits(const std::string& text, std::vector<ThresholdEdit> edits);

}  // namespace kcx
