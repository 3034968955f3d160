// A summary's heatmap (core/summary/summary_views.h: slice values × position buckets, or
// steps × position buckets) painted with QPainter: one rectangle a cell, coloured by its
// value on the heatmap's colour map, its number written in it when there is room, empty
// cells grey, cells beyond the selected clause's limit outlined. The window's summary page
// and the report both paint it with this, so they agree. Any thread (QPainter on a QImage).
#pragma once

#include <QFont>
#include <QImage>
#include <QRect>
#include <QString>

#include <optional>

#include "core/summary/summary_views.h"

class QPainter;

namespace kcx::ui {

struct SummaryGridStyle {
    std::optional<double> markAbove, markBelow;   // outline cells above / below these
    int selectedRow = -1, selectedColumn = -1;
    bool log = false;                              // colour on a log scale (positive values)
};

// Where things go in an area: row labels at the left, column labels on top, cells below.
struct SummaryGridLayout {
    QRect area, cells;
    int rowHeight = 0, columnWidth = 0;
    // The grid cell at a point, or (-1, -1).
    std::pair<int, int> cellAt(QPoint p, const SummaryGrid& grid) const;
    QRect cellRect(int row, int column) const;
};

inline constexpr int kSummaryRowHeight = 22;   // preferred; fewer pixels when rows are many
// The height a widget showing `rows` rows wants per row: 22 px up to 60 rows, then 4 px
// (1,000 steps: a 4,000-pixel strip to scroll, every row still its own line).
int summaryRowPixels(size_t rows);
SummaryGridLayout summaryGridLayout(const SummaryGrid& grid, QRect area, const QFont& font);
void paintSummaryGrid(QPainter& p, const SummaryGrid& grid, const SummaryGridLayout& layout,
                      const SummaryGridStyle& style, const QFont& font);
// The grid with a title and a colour bar, as a width × height picture (the report's figure).
QImage summaryGridImage(const SummaryGrid& grid, QSize size, const QString& title, const SummaryGridStyle& style);
// "mean of abs_log_ratio", "p99 (sketch) of tv" …
QString summaryGridTitle(const SummaryGrid& grid);

}  // namespace kcx::ui
