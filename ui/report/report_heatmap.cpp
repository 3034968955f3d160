// The report's heatmap picture: the core grid rendered by renderHeatmap() (as in the
// window), framed with row labels, a token-position axis and a colour bar. QPainter on a
// QImage only, so it runs on any thread.
#include <QFont>
#include <QFontMetrics>
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "core/heatmap/heatmap.h"
#include "core/metrics/derived_slices.h"
#include "ui/heatmap/clause_lens.h"
#include "ui/heatmap/heatmap_render.h"
#include "ui/report/report_internal.h"
#include "ui/style/chart_style.h"
#include "ui/style/colour_map.h"

namespace kcx::ui {

namespace {

QFont pixelFont(int px, bool bold = false) {
    QFont f(QStringLiteral("DejaVu Sans"));
    f.setPixelSize(px);
    f.setBold(bold);
    return f;
}

// Round tick positions over [0, end]: about `want` of them.
std::vector<size_t> ticks(size_t end, int want) {
    const NiceRange r = niceRange(0, double(std::max<size_t>(end, 1)), want);
    const double step = r.ticks > 1 ? (r.hi - r.lo) / (r.ticks - 1) : double(end);
    std::vector<size_t> out;
    for (double t = 0; t <= double(end) + 1e-9 && step > 0; t += step)
        out.push_back(size_t(std::llround(t)));
    return out;
}

}  // namespace

ReportFigure heatmapFigure(std::shared_ptr<const Run> run, std::shared_ptr<const MetricValues> values,
                           const std::string& metric, const ClauseLens* lens, const DerivedLookup& derived,
                           const Progress& progress) {
    HeatmapRowSpec spec;
    const bool useLens = lens && lens->has;
    const std::string lensKey = useLens ? lens->rowKey.toStdString() : std::string();
    const bool lensRows = !lensKey.empty() && (run->slices.keyIndex(lensKey) >= 0 || (isDerivedKey(lensKey) && derived));
    const bool slices = lensRows || !run->slices.keys.empty();
    if (slices) {
        spec.mode = HeatmapRows::SliceValues;
        spec.sliceKey = lensRows ? lensKey : run->slices.keys.front();
    }
    const auto index = HeatmapIndex::build(run, values, spec, progress, 0, derived);
    const CellStatistic stat = useLens ? lens->statistic : CellStatistic{};
    const QString statName = useLens ? stat.name : QStringLiteral("mean");
    const QString qmetric = QString::fromStdString(metric);
    const QString qkey = QString::fromStdString(spec.sliceKey);

    const int W = kFigureWidth, H = kFigureHeight;
    QImage image(W, H, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(1);
    image.fill(Qt::white);
    QPainter p(&image);
    p.setRenderHint(QPainter::TextAntialiasing);
    const QFont font = pixelFont(12), small = pixelFont(11), title = pixelFont(14, true);
    const QFontMetrics fm(font);

    int labelW = 40;
    for (size_t r = 0; r < index->rowCount() && slices; ++r)
        labelW = std::max(labelW, fm.horizontalAdvance(QString::fromStdString(index->row(r).label)) + 14);
    labelW = std::min(labelW, 170);
    const QRect plot(labelW, 36, W - labelW - 104, H - 36 - 52);

    HeatmapRequest req;
    req.row0 = 0;
    req.row1 = index->rowCount();
    req.rowBins = size_t(plot.height());
    req.pos0 = 0;
    req.pos1 = index->maxLength();
    req.columns = size_t(plot.width());
    req.aggregate = stat.aggregate;
    req.quantile = stat.quantile;
    req.threshold = stat.threshold;
    req.mark = stat.mark;
    req.markLevel = stat.markLevel;
    req.fewBelow = stat.fewBelow;
    req.scope = stat.scope;
    req.widenForFew = stat.aggregate == HeatmapAggregate::Quantile;
    const HeatmapGrid grid = computeGrid(*index, req, progress);
    const auto [lo, hi] = colourRange(grid, ColourScale{});
    const LevelMapper levels(lo, hi, false);
    p.drawImage(plot.topLeft(), renderHeatmap(grid, plot.size(), levels, ColourMap::Viridis));
    p.setPen(QColor(0x60, 0x60, 0x60));
    p.drawRect(plot.adjusted(0, 0, -1, -1));

    p.setPen(Qt::black);
    p.setFont(title);
    const QString what = useLens ? QStringLiteral("%1's %2 of %3").arg(stat.clause, statName, qmetric)
                                 : QStringLiteral("Mean %1").arg(qmetric);
    const QString heading = slices ? QStringLiteral("%1 by %2 and token position").arg(what, qkey)
                                   : QStringLiteral("%1 by sequence and token position").arg(what);
    p.drawText(QRect(0, 4, W, 24), Qt::AlignHCenter | Qt::AlignVCenter, heading);

    // Row labels, centred on their bands (when the bands are tall enough to read).
    p.setFont(font);
    const size_t rows = grid.rows;
    const int band = rows ? plot.height() / int(rows) : 0;
    if (slices && band >= fm.height()) {
        for (size_t r = 0; r < rows; ++r) {
            const int y0 = plot.top() + int(pixelOfCell(r, size_t(plot.height()), rows));
            const int y1 = plot.top() + int(pixelOfCell(r + 1, size_t(plot.height()), rows));
            const size_t first = grid.rowBins.lo(r);
            QString label = QString::fromStdString(index->row(first).label);
            label = fm.elidedText(label, Qt::ElideRight, labelW - 10);
            p.drawText(QRect(0, y0, labelW - 8, y1 - y0), Qt::AlignRight | Qt::AlignVCenter, label);
        }
    } else {
        p.save();
        p.translate(labelW - 12, plot.center().y());
        p.rotate(-90);
        p.drawText(QRect(-plot.height() / 2, -14, plot.height(), 18), Qt::AlignCenter,
                   slices ? QStringLiteral("%1 values of %2").arg(index->rowCount()).arg(qkey)
                          : QStringLiteral("%1 sequences, most divergent first").arg(index->rowCount()));
        p.restore();
    }

    // Token-position axis: ticks at round positions.
    const size_t maxLen = index->maxLength();
    p.setFont(small);
    for (size_t t : ticks(maxLen, 7)) {
        const int x = plot.left() + int(std::llround(double(t) / double(std::max<size_t>(maxLen, 1)) * plot.width()));
        p.drawLine(x, plot.bottom() + 1, x, plot.bottom() + 5);
        p.drawText(QRect(x - 40, plot.bottom() + 6, 80, 16), Qt::AlignHCenter | Qt::AlignTop, QString::number(t));
    }
    p.setFont(font);
    p.drawText(QRect(plot.left(), plot.bottom() + 22, plot.width(), 18), Qt::AlignHCenter | Qt::AlignTop,
               QStringLiteral("token position"));

    // Colour bar: low at the bottom, high at the top.
    const QList<QRgb> table = colourTable(ColourMap::Viridis);
    const QRect bar(plot.right() + 18, plot.top(), 16, plot.height());
    for (int y = 0; y < bar.height(); ++y) {
        const int level = std::clamp(int((1.0 - double(y) / std::max(1, bar.height() - 1)) * (kLevels - 1)), 0, kLevels - 1);
        p.setPen(QColor::fromRgb(table[level]));
        p.drawLine(bar.left(), bar.top() + y, bar.right(), bar.top() + y);
    }
    p.setPen(QColor(0x60, 0x60, 0x60));
    p.drawRect(bar.adjusted(0, 0, -1, -1));
    p.setPen(Qt::black);
    p.setFont(small);
    for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
        const int y = bar.bottom() - int(std::lround(f * (bar.height() - 1)));
        p.drawLine(bar.right() + 1, y, bar.right() + 4, y);
        p.drawText(QRect(bar.right() + 6, y - 8, 60, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   reportNumber(levels.valueAt(f)));
    }

    // What the marks and the grey cells mean.
    bool anyMarked = false, anyEmpty = false, anyFew = false;
    for (size_t r = 0; r < grid.rows; ++r)
        for (size_t c = 0; c < grid.cols; ++c) {
            anyMarked = anyMarked || (grid.n[grid.at(r, c)] && grid.marked(r, c));
            anyEmpty = anyEmpty || !grid.n[grid.at(r, c)];
            anyFew = anyFew || grid.few(r, c);
        }
    const QString breaks = QStringLiteral("%1 %2 %3").arg(statName, stat.mark == HeatmapMark::Below ? QStringLiteral("below")
                                                                                                     : QStringLiteral("above"),
                                                          stat.markText);
    QStringList legend;
    if (anyMarked)
        legend << QStringLiteral("outlined: %1").arg(breaks);
    if (anyFew)
        legend << QStringLiteral("faded: fewer than %1 values").arg(stat.fewBelow);
    if (anyEmpty)
        legend << QStringLiteral("grey: no tokens in scope at these positions");
    p.setFont(small);
    p.drawText(QRect(4, H - 16, W - 8, 14), Qt::AlignLeft | Qt::AlignVCenter, legend.join(QStringLiteral(" · ")));
    p.end();

    ReportFigure f;
    f.id = "heatmap";
    f.title = QStringLiteral("Divergence heatmap: %1").arg(qmetric);
    f.caption = QStringLiteral("Each cell is the %1 of %2 over the tokens of its rows at its positions "
                               "(%3 rows, positions 0 to %4 in %5 columns); colours span %6 to %7 (viridis).")
                    .arg(statName, qmetric)
                    .arg(index->rowCount())
                    .arg(maxLen ? maxLen - 1 : 0)
                    .arg(grid.cols)
                    .arg(reportNumber(levels.lo()), reportNumber(levels.hi()));
    if (slices)
        f.caption += QStringLiteral(" Rows: the values of the slice key %1.").arg(qkey);
    if (useLens && !stat.scopeText.isEmpty())
        f.caption += QStringLiteral(" Only the tokens of %1's scope count: %2.").arg(stat.clause, stat.scopeText);
    if (useLens && stat.mark != HeatmapMark::None)
        f.caption += anyMarked ? QStringLiteral(" Outlined cells break %1: their %2.").arg(stat.clause, breaks)
                               : QStringLiteral(" No cell breaks %1 (%2).").arg(stat.clause, breaks);
    if (anyFew)
        f.caption += QStringLiteral(" Faded cells rest on fewer than %1 values.").arg(stat.fewBelow);
    f.image = std::move(image);
    return f;
}

}  // namespace kcx::ui
