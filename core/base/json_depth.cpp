#include "core/base/json_depth.h"

namespace kcx {

size_t jsonDepthExceeded(std::string_view text, int maxDepth) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;   // the escaped character cannot end the string
            else if (c == '"')
                inString = false;
            continue;
        }
        switch (c) {
        case '"': inString = true; break;
        case '[':
        case '{':
            if (++depth > maxDepth)
                return i;
            break;
        case ']':
        case '}':
            if (depth > 0)
                --depth;
            break;
        default: break;
        }
    }
    return std::string_view::npos;
}

std::string jsonDepthMessage(int maxDepth) {
    return "JSON nested deeper than " + std::to_string(maxDepth) + " levels";
}

}  // namespace kcx
