#include "app/table.h"

#include "core/base/printable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kcx::app {

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> rightAligned)
    : header_(std::move(header)), right_(std::move(rightAligned)) {
    right_.resize(header_.size(), false);
}

void TextTable::addRow(std::vector<std::string> cells) {
    cells.resize(header_.size());
    for (std::string& c : cells)   // clause ids and slice values come from files
        c = printable(c);
    rows_.push_back(std::move(cells));
}

namespace {

// Terminal columns of UTF-8 text: one per code point (continuation bytes do not count), so
// "−" or "½" in a cell keeps the columns straight.
size_t columnsOf(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s)
        n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace

std::string TextTable::render() const {
    std::vector<size_t> width(header_.size());
    for (size_t c = 0; c < header_.size(); ++c) {
        width[c] = columnsOf(header_[c]);
        for (const auto& r : rows_)
            width[c] = std::max(width[c], columnsOf(r[c]));
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (size_t c = 0; c < cells.size(); ++c) {
            const std::string pad(width[c] - columnsOf(cells[c]), ' ');
            s += right_[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
            if (c + 1 < cells.size())
                s += "  ";
        }
        return s + "\n";
    };
    std::string out = line(header_);
    size_t total = 0;
    for (size_t w : width)
        total += w + 2;
    out += std::string(total - 2, '-') + "\n";
    for (const auto& r : rows_)
        out += line(r);
    return out;
}

std::string human(double v) {
    if (std::isnan(v))
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace kcx::app
