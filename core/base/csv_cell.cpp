#include "core/base/csv_cell.h"

namespace kcx {

namespace {
bool digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool isPlainNumber(std::string_view s) {
    size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
        ++i;
    const size_t intStart = i;
    while (i < s.size() && digit(s[i]))
        ++i;
    size_t digits = i - intStart;
    if (i < s.size() && s[i] == '.') {
        const size_t fracStart = ++i;
        while (i < s.size() && digit(s[i]))
            ++i;
        digits += i - fracStart;
    }
    if (digits == 0)
        return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            ++i;
        const size_t expStart = i;
        while (i < s.size() && digit(s[i]))
            ++i;
        if (i == expStart)
            return false;
    }
    return i == s.size();
}

std::string csvTextCell(std::string_view text) {
    std::string cell;
    cell.reserve(text.size() + 3);
    if (!text.empty() && std::string_view("=+-@\t\r").find(text[0]) != std::string_view::npos && !isPlainNumber(text))
        cell += '\'';
    cell += text;
    if (cell.find_first_of(",\"\r\n") == std::string::npos)
        return cell;
    std::string quoted = "\"";
    for (const char c : cell) {
        if (c == '"')
            quoted += '"';
        quoted += c;
    }
    quoted += '"';
    return quoted;
}

}  // namespace kcx
