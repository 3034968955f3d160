#include "ui/heatmap/summary_grid_paint.h"

#include <QFontMetrics>
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "ui/style/chart_style.h"
#include "ui/style/colour_map.h"
#include "ui/style/status_style.h"

namespace kcx::ui {

namespace {

QString cellText(const SummaryGrid& g, double v) {
    if (g.stat.stat == CellStat::Count)
        return countText(uint64_t(v));
    return numberText(v);
}

LevelMapper mapperOf(const SummaryGrid& g, bool log) {
    double lo = g.minValue(), hi = g.maxValue();
    if (std::isnan(lo))
        lo = 0, hi = 1;
    if (log && !(lo > 0)) {
        double pos = NAN;
        for (double v : g.values)
            if (v > 0 && !(v >= pos))
                pos = v;
        lo = std::isnan(pos) ? 1e-12 : pos;
    }
    if (!(hi > lo))
        hi = lo + (lo == 0 ? 1 : std::abs(lo) * 1e-6);
    return LevelMapper(lo, hi, log && hi > 0);
}

}  // namespace

int summaryRowPixels(size_t rows) { return rows <= 60 ? kSummaryRowHeight : 4; }

std::pair<int, int> SummaryGridLayout::cellAt(QPoint p, const SummaryGrid& grid) const {
    if (!cells.contains(p) || rowHeight <= 0 || columnWidth <= 0)
        return {-1, -1};
    const int r = (p.y() - cells.top()) / rowHeight, c = (p.x() - cells.left()) / columnWidth;
    if (r < 0 || c < 0 || size_t(r) >= grid.rowCount() || size_t(c) >= grid.columnCount())
        return {-1, -1};
    return {r, c};
}

QRect SummaryGridLayout::cellRect(int row, int column) const {
    return QRect(cells.left() + column * columnWidth, cells.top() + row * rowHeight, columnWidth, rowHeight);
}

SummaryGridLayout summaryGridLayout(const SummaryGrid& grid, QRect area, const QFont& font) {
    SummaryGridLayout L;
    L.area = area;
    const QFontMetrics fm(font);
    int labelWidth = fm.horizontalAdvance(QStringLiteral("all positions"));
    for (const std::string& r : grid.rows)
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(QString::fromStdString(r)));
    labelWidth = std::min(labelWidth + 12, area.width() / 3);
    const int header = fm.height() + 10;
    const int rows = int(std::max<size_t>(grid.rowCount(), 1)), cols = int(std::max<size_t>(grid.columnCount(), 1));
    L.columnWidth = std::max(1, (area.width() - labelWidth) / cols);
    L.rowHeight = std::clamp((area.height() - header) / rows, 1, kSummaryRowHeight);
    L.cells = QRect(area.left() + labelWidth, area.top() + header, L.columnWidth * cols, L.rowHeight * rows);
    return L;
}

void paintSummaryGrid(QPainter& p, const SummaryGrid& g, const SummaryGridLayout& L, const SummaryGridStyle& style,
                      const QFont& font) {
    p.save();
    p.setFont(font);
    const QFontMetrics fm(font);
    const QList<QRgb> table = colourTable(ColourMap::Viridis);
    const LevelMapper mapper = mapperOf(g, style.log);
    const bool text = L.rowHeight >= fm.height() && L.columnWidth >= fm.horizontalAdvance(QStringLiteral("0.0000e-00"));
    // Column labels.
    p.setPen(Qt::black);
    for (size_t c = 0; c < g.columnCount(); ++c) {
        const QRect r(L.cells.left() + int(c) * L.columnWidth, L.area.top(), L.columnWidth, L.cells.top() - L.area.top());
        p.drawText(r.adjusted(2, 0, -2, 0), Qt::AlignCenter,
                   fm.elidedText(QString::fromStdString(g.columns[c]), Qt::ElideRight, r.width() - 4));
    }
    // Rows thinner than a line of text: a label every few rows.
    const size_t labelEvery = L.rowHeight >= fm.height() - 2 ? 1 : size_t((fm.height() + L.rowHeight - 1) / std::max(L.rowHeight, 1));
    for (size_t r = 0; r < g.rowCount(); ++r) {
        if (r % labelEvery == 0) {
            const int mid = L.cells.top() + int(r) * L.rowHeight + L.rowHeight / 2;
            const QRect lr(L.area.left(), mid - fm.height() / 2, L.cells.left() - L.area.left() - 6, fm.height());
            p.setPen(Qt::black);
            p.drawText(lr, Qt::AlignVCenter | Qt::AlignRight,
                       fm.elidedText(QString::fromStdString(g.rows[r]), Qt::ElideMiddle, lr.width()));
        }
        for (size_t c = 0; c < g.columnCount(); ++c) {
            const QRect cr = L.cellRect(int(r), int(c));
            const double v = g.value(r, c);
            const uint8_t level = std::isnan(v) ? 0 : mapper.level(v);
            const QColor fill = std::isnan(v) ? QColor(table[kEmptyIndex]) : QColor(table[level]);
            p.fillRect(cr.adjusted(0, 0, -1, L.rowHeight >= 10 ? -1 : 0), fill);   // thin rows: no gap
            if (text && !std::isnan(v)) {
                p.setPen(level < 150 ? Qt::white : Qt::black);
                p.drawText(cr.adjusted(3, 0, -3, 0), Qt::AlignCenter, cellText(g, v));
            }
            const bool beyond = !std::isnan(v) && g.stat.stat != CellStat::Count &&
                                ((style.markAbove && v > *style.markAbove) || (style.markBelow && v < *style.markBelow));
            if (beyond) {
                p.setPen(QPen(statusColour(Status::Fail), 2));
                p.drawRect(cr.adjusted(1, 1, -2, -2));
            }
        }
    }
    if (style.selectedRow >= 0 && style.selectedColumn >= 0 && size_t(style.selectedRow) < g.rowCount() &&
        size_t(style.selectedColumn) < g.columnCount()) {
        p.setPen(QPen(QColor(0xff, 0x6f, 0x00), 3));
        p.drawRect(L.cellRect(style.selectedRow, style.selectedColumn).adjusted(1, 1, -2, -2));
    }
    // The "all positions" column is a total, not a bucket: a line sets it apart.
    p.setPen(QPen(Qt::white, 3));
    p.drawLine(L.cells.left() + L.columnWidth, L.cells.top(), L.cells.left() + L.columnWidth, L.cells.bottom());
    p.restore();
}

QString summaryGridTitle(const SummaryGrid& g) {
    const QString stat = QString::fromStdString(cellStatName(g.stat));
    const QString rows = g.rowKey.empty() ? QStringLiteral("all tokens") : QString::fromStdString(g.rowKey);
    return QStringLiteral("%1 of %2 by %3 × position bucket").arg(stat, QString::fromStdString(g.metric), rows);
}

QImage summaryGridImage(const SummaryGrid& g, QSize size, const QString& title, const SummaryGridStyle& style) {
    QImage img(size, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::TextAntialiasing);
    QFont font(QStringLiteral("DejaVu Sans"));
    font.setPixelSize(12);
    QFont bold = font;
    bold.setBold(true);
    bold.setPixelSize(14);
    p.setFont(bold);
    p.setPen(Qt::black);
    p.drawText(QRect(10, 6, size.width() - 20, 22), Qt::AlignLeft | Qt::AlignVCenter, title);
    // The colour bar at the right.
    const int barW = 16, barX = size.width() - 70;
    const QRect gridArea(10, 34, barX - 30, size.height() - 44);
    const SummaryGridLayout L = summaryGridLayout(g, gridArea, font);
    paintSummaryGrid(p, g, L, style, font);
    const QList<QRgb> table = colourTable(ColourMap::Viridis);
    const LevelMapper mapper = mapperOf(g, style.log);
    const QRect bar(barX, L.cells.top(), barW, std::max(40, std::min(L.cells.height(), size.height() - 60)));
    for (int y = 0; y < bar.height(); ++y) {
        const int level = int(double(kLevels - 1) * (1 - double(y) / std::max(1, bar.height() - 1)));
        p.fillRect(QRect(bar.left(), bar.top() + y, barW, 1), QColor(table[level]));
    }
    p.setFont(font);
    p.drawText(QRect(bar.right() + 4, bar.top() - 2, 60, 16), Qt::AlignLeft, numberText(mapper.hi()));
    p.drawText(QRect(bar.right() + 4, bar.bottom() - 14, 60, 16), Qt::AlignLeft, numberText(mapper.lo()));
    return img;
}

}  // namespace kcx::ui
