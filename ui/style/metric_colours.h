// How a per-token metric colours the tokens of one sequence: a viridis scale over the
// sequence's finite values ([0, max] for a metric that is never negative), and two
// distinct marks for tokens without a value: missing (not logged; light grey, hatched)
// and non-finite (NaN or infinite inputs or result; red, crossed).
#pragma once

#include <QBrush>
#include <QColor>
#include <QList>
#include <QtGui/qrgb.h>

#include <cstddef>

#include "core/metrics/metrics.h"
#include "ui/style/colour_map.h"

namespace kcx::ui {

enum class ValueKind { None, Value, Missing, NonFinite };

ValueKind valueKind(double v);

class MetricColours {
public:
    MetricColours();
    // The values of flat token indices [begin, end) of a per-token metric (values may be null).
    MetricColours(const MetricValues* values, size_t begin, size_t end);

    bool valid() const { return valid_; }   // there is at least one finite value
    double lo() const { return mapper_.lo(); }
    double hi() const { return mapper_.hi(); }
    QColor colour(double v) const;          // any value; kinds other than Value get their mark colour
    QBrush brush(double v) const;           // colour plus the hatch/cross pattern of the marks
    QColor atFraction(double f) const;      // the scale at f in [0, 1], for legends

    static QColor missingColour() { return QColor(0xd8, 0xd8, 0xd8); }
    static QColor nonFiniteColour() { return QColor(0xff, 0x2d, 0x55); }
    static QBrush missingBrush();
    static QBrush nonFiniteBrush();

private:
    QList<QRgb> table_;
    LevelMapper mapper_{0, 1, false};
    bool valid_ = false;
};

}  // namespace kcx::ui
