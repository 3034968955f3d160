#include "ui/style/metric_colours.h"

#include <QPainter>
#include <QPixmap>

#include <algorithm>
#include <cmath>

namespace kcx::ui {

ValueKind valueKind(double v) {
    if (std::isfinite(v))
        return ValueKind::Value;
    return isMissing(v) ? ValueKind::Missing : ValueKind::NonFinite;
}

MetricColours::MetricColours() : table_(colourTable(ColourMap::Viridis)) {}

MetricColours::MetricColours(const MetricValues* values, size_t begin, size_t end) : MetricColours() {
    if (!values || values->level != MetricLevel::Token)
        return;
    end = std::min(end, values->values.size());
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = begin; i < end; ++i) {
        const double v = values->values[i];
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (!(lo <= hi))
        return;
    valid_ = true;
    if (lo >= 0)
        lo = 0;   // a magnitude: zero is "no divergence" and gets the darkest colour
    mapper_ = LevelMapper(lo, hi, false);
}

QColor MetricColours::colour(double v) const {
    switch (valueKind(v)) {
    case ValueKind::Value: return QColor::fromRgb(table_[mapper_.level(v)]);
    case ValueKind::Missing: return missingColour();
    case ValueKind::NonFinite: return nonFiniteColour();
    case ValueKind::None: break;
    }
    return missingColour();
}

QBrush MetricColours::brush(double v) const {
    switch (valueKind(v)) {
    case ValueKind::Missing: return missingBrush();
    case ValueKind::NonFinite: return nonFiniteBrush();
    default: return QBrush(colour(v));
    }
}

QColor MetricColours::atFraction(double f) const {
    const int level = std::clamp(int(f * kLevels), 0, kLevels - 1);
    return QColor::fromRgb(table_[level]);
}

namespace {
QBrush patterned(const QColor& background, const QColor& ink, bool cross) {
    QPixmap tile(8, 8);
    tile.fill(background);
    QPainter p(&tile);
    p.setPen(QPen(ink, 1));
    p.drawLine(0, 8, 8, 0);
    if (cross)
        p.drawLine(0, 0, 8, 8);
    return QBrush(tile);
}
}  // namespace

QBrush MetricColours::missingBrush() { return patterned(missingColour(), QColor(0x9e, 0x9e, 0x9e), false); }
QBrush MetricColours::nonFiniteBrush() { return patterned(nonFiniteColour(), QColor(0x7a, 0x00, 0x1a), true); }

}  // namespace kcx::ui
