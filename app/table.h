// Plain-text tables for the terminal: columns sized to their content.
#pragma once

#include <string>
#include <vector>

namespace kcx::app {

class TextTable {
public:
    explicit TextTable(std::vector<std::string> header, std::vector<bool> rightAligned = {});
    void addRow(std::vector<std::string> cells);
    std::string render() const;

private:
    std::vector<std::string> header_;
    std::vector<bool> right_;
    std::vector<std::vector<std::string>> rows_;
};

// A number for people: up to 6 significant digits, "-" when absent.
std::string human(double v);

}  // namespace kcx::app
