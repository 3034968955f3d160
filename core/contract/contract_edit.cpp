#include "core/contract/contract_edit.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace kcx {

std::string formatThreshold(double value) {
    if (!std::isfinite(value))
        throw std::invalid_argument("a threshold must be a finite number");
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, value);   // shortest round-trip form
    std::string s(buf, r.ptr);
    // YAML 1.1 readers take "1e-06" as a string; "1.0e-06" is a float to every reader.
    const size_t e = s.find('e');
    if (e != std::string::npos && s.find('.') == std::string::npos)
        s.insert(e, ".0");
    return s;
}

std::string applyThresholdEdits(const std::string& text, std::vector<ThresholdEdit> edits) {
    std::sort(edits.begin(), edits.end(),
              [](const ThresholdEdit& a, const ThresholdEdit& b) { return a.span.offset > b.span.offset; });
    std::string out = text;
    size_t limit = text.size();   // the previous (later) edit's start
    for (const ThresholdEdit& ed : edits) {
        const SourceSpan& s = ed.span;
        const std::string where = "line " + std::to_string(s.line) + ", column " + std::to_string(s.column);
        if (!s.known() || s.length == 0)
            throw std::invalid_argument("the threshold has no position in the contract text");
        if (s.offset + s.length > limit)
            throw std::invalid_argument("threshold edit at " + where + " runs past the text or into another edit");
        out.replace(s.offset, s.length, formatThreshold(ed.value));
        limit = s.offset;
    }
    return out;
}

}  // namespace kcx
