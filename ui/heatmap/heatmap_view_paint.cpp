// HeatmapView: layout and painting (the cached image, row labels, position axis, legend).
#include <QFontMetrics>
#include <QPaintEvent>
#include <QPainter>
#include <QRegion>

#include <algorithm>
#include <cmath>

#include "ui/heatmap/heatmap_render.h"
#include "ui/heatmap/heatmap_view.h"

namespace kcx::ui {

namespace {

constexpr int kLegendBar = 14;

QString number(double v) {
    if (v == 0)
        return QStringLiteral("0");
    const double a = std::fabs(v);
    return QString::number(v, a >= 1e-3 && a < 1e5 ? 'g' : 'e', 3);
}

// 1, 2 or 5 times a power of ten, at least `raw` and at least 1.
size_t niceStep(double raw) {
    if (raw <= 1)
        return 1;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw)
            return size_t(m * p);
    return size_t(10 * p);
}

QString modeText(const HeatmapRowSpec& s) {
    switch (s.mode) {
    case HeatmapRows::SliceValues: return QStringLiteral("rows: %1").arg(QString::fromStdString(s.sliceKey));
    case HeatmapRows::SequencesOfSlice:
        return QStringLiteral("rows: sequences of %1=%2, most divergent first")
            .arg(QString::fromStdString(s.sliceKey), QString::fromStdString(s.sliceValue));
    case HeatmapRows::AllSequences: return QStringLiteral("rows: sequences, most divergent first");
    case HeatmapRows::Conditions:
        return QStringLiteral("rows: %1, and the rest of the run").arg(QString::fromStdString(conditionsText(s.conditions)));
    }
    return {};
}

}  // namespace

QRect HeatmapView::plotRect() const {
    const QFontMetrics fm(font());
    const int legend = kLegendBar + 14 + fm.horizontalAdvance(QStringLiteral("-0.000e-00"));
    const int top = fm.height() + 8, bottom = 2 * fm.height() + 12;
    return QRect(labelWidth_, top, std::max(0, width() - labelWidth_ - legend),
                 std::max(0, height() - top - bottom));
}

QRectF HeatmapView::imageTarget() const {
    const QRect plot = plotRect();
    if (!grid_ || row1_ <= row0_ || pos1_ <= pos0_)
        return QRectF(plot);
    const double sx = double(plot.width()) / double(pos1_ - pos0_);
    const double sy = double(plot.height()) / double(row1_ - row0_);
    const Bins& c = grid_->colBins;
    const Bins& r = grid_->rowBins;
    return QRectF(plot.left() + (double(c.begin) - double(pos0_)) * sx,
                  plot.top() + (double(r.begin) - double(row0_)) * sy, double(c.width) * sx,
                  double(r.width) * sy);
}

void HeatmapView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QRect plot = plotRect();
    // Each pixel is painted once: the margins, then the plot (a copy of the image).
    for (const QRect& r : QRegion(rect()).subtracted(plot))
        p.fillRect(r, palette().window());
    const QRectF target = pixmap_.isNull() ? QRectF() : imageTarget();
    const QFontMetrics fm(font());
    // "abs_log_ratio · N1's p99.9 over precision=fp8 · marked: above max 0.3 · slices by …"
    const QString name = stat_.name.isEmpty() ? QString::fromLatin1(aggregateName(stat_.aggregate)) : stat_.name;
    QString title = QStringLiteral("%1 · %2").arg(metric_, stat_.clause.isEmpty() ? name : tr("%1's %2").arg(stat_.clause, name));
    if (stat_.name.isEmpty() && stat_.aggregate == HeatmapAggregate::ShareAbove)
        title += QStringLiteral(" %1").arg(number(stat_.threshold));
    if (!stat_.scopeText.isEmpty())
        title += tr(" over %1").arg(stat_.scopeText);
    if (stat_.mark != HeatmapMark::None)
        title += tr(" · marked: %1 %2").arg(stat_.mark == HeatmapMark::Above ? tr("above") : tr("below"),
                                            stat_.markText.isEmpty() ? number(stat_.markLevel) : stat_.markText);
    title += QStringLiteral(" · ") + modeText(spec_);
    if (isBusy())
        title += QStringLiteral(" · computing…");
    p.setPen(palette().windowText().color());
    p.drawText(QRect(4, 2, width() - 8, fm.height() + 4), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(title, Qt::ElideRight, width() - 8));
    if (!target.contains(QRectF(plot)))
        p.fillRect(plot, QColor::fromRgb(colourTable(scale_.map)[kEmptyIndex]));
    if (!index_ || plot.isEmpty()) {
        p.drawText(plot, Qt::AlignCenter, isBusy() ? tr("Computing…") : tr("No per-token metric to show"));
        return;
    }
    if (!pixmap_.isNull()) {
        p.save();
        p.setClipRect(plot);
        const QRectF& t = target;
        const QSize whole(int(std::lround(t.width())), int(std::lround(t.height())));
        if (whole == pixmap_.size())   // shown as rendered, or panned: a plain copy
            p.drawPixmap(QPoint(int(std::lround(t.left())), int(std::lround(t.top()))), pixmap_);
        else   // zoomed since: stretched until the new image arrives
            p.drawPixmap(t, pixmap_, QRectF(pixmap_.rect()));
        p.restore();
    }
    p.setPen(palette().mid().color());
    p.drawRect(plot.adjusted(0, 0, -1, -1));
    p.setPen(palette().windowText().color());
    paintRowLabels(p, plot);
    paintPositionAxis(p, plot);
    paintLegend(p, plot);
}

void HeatmapView::paintRowLabels(QPainter& p, const QRect& plot) const {
    if (row1_ <= row0_)
        return;
    const QFontMetrics fm(font());
    const double h = double(plot.height()) / double(row1_ - row0_);
    const size_t step = std::max<size_t>(1, size_t(std::ceil(double(fm.height()) / h)));
    const int w = plot.left() - 6;
    for (size_t r = (row0_ + step - 1) / step * step; r < row1_; r += step) {
        const double yc = plot.top() + (double(r - row0_) + 0.5) * h;
        const QString label = QString::fromStdString(index_->row(r).label);
        p.drawText(QRect(2, int(yc) - fm.height() / 2, w - 2, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
                   fm.elidedText(label, Qt::ElideMiddle, w - 2));
    }
}

void HeatmapView::paintPositionAxis(QPainter& p, const QRect& plot) const {
    if (pos1_ <= pos0_)
        return;
    const QFontMetrics fm(font());
    const double sx = double(plot.width()) / double(pos1_ - pos0_);
    const int labelW = fm.horizontalAdvance(QString::number(pos1_)) + 24;
    const size_t step = niceStep(double(labelW) / sx);
    const int y = plot.bottom() + 1;
    for (size_t t = (pos0_ + step - 1) / step * step; t < pos1_; t += step) {
        const int x = plot.left() + int(std::lround((double(t - pos0_) + (sx >= 4 ? 0.5 : 0.0)) * sx));
        p.drawLine(x, y, x, y + 4);
        p.drawText(QRect(x - labelW / 2, y + 5, labelW, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
                   QString::number(t));
    }
    p.drawText(QRect(plot.left(), y + 5 + fm.height(), plot.width(), fm.height() + 4), Qt::AlignCenter,
               tr("token position (%1–%2 of %3)").arg(pos0_).arg(pos1_ - 1).arg(index_->maxLength()));
}

void HeatmapView::paintLegend(QPainter& p, const QRect& plot) const {
    if (image_.isNull())
        return;
    const QFontMetrics fm(font());
    const QRect bar(plot.right() + 10, plot.top(), kLegendBar, plot.height());
    QImage ramp(1, kLevels, QImage::Format_Indexed8);
    ramp.setColorTable(colourTable(scale_.map));
    for (int i = 0; i < kLevels; ++i)
        ramp.scanLine(i)[0] = uchar(kLevels - 1 - i);   // high values at the top
    p.drawImage(bar, ramp);
    p.setPen(palette().mid().color());
    p.drawRect(bar.adjusted(0, 0, -1, -1));
    p.setPen(palette().windowText().color());
    const LevelMapper levels(shownLo_, shownHi_, shownLog_);
    const int x = bar.right() + 4, w = width() - x;
    p.drawText(QRect(x, bar.top(), w, fm.height()), Qt::AlignLeft | Qt::AlignTop, number(levels.hi()));
    p.drawText(QRect(x, bar.center().y() - fm.height() / 2, w, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
               number(levels.valueAt(0.5)));
    p.drawText(QRect(x, bar.bottom() - fm.height(), w, fm.height()), Qt::AlignLeft | Qt::AlignBottom,
               number(levels.lo()));
    p.drawText(QRect(bar.left(), bar.bottom() + 4, w + kLegendBar, fm.height()), Qt::AlignLeft,
               shownLog_ ? tr("log") : tr("linear"));
    // Where the clause's limit falls on the scale: it is in the cells' own units (a marked
    // statistic is always the clause's own), so it belongs on the same bar.
    const double limit = stat_.markLevel;
    if (stat_.mark != HeatmapMark::None && limit >= levels.lo() && limit <= levels.hi()) {
        const double f = double(levels.level(limit)) / double(kLevels - 1);
        const int y = bar.bottom() - int(std::lround(f * (bar.height() - 1)));
        p.setPen(QPen(QColor::fromRgb(colourTable(scale_.map)[kMarkerIndex]), 2));
        p.drawLine(bar.left() - 4, y, bar.right() + 2, y);
    }
}

}  // namespace kcx::ui
