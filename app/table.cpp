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

std::string TextTable::render() const {
    std::vector<size_t> width(header_.size());
    for (size_t c = 0; c < header_.size(); ++c) {
        width[c] = header_[c].size();
        for (const auto& r : rows_)
            width[c] = std::max(width[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (size_t c = 0; c < cells.size(); ++c) {
            const std::string pad(width[c] - cells[c].size(), ' ');
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
