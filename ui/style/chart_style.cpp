#include "ui/style/chart_style.h"

#include <QLocale>
#include <QPen>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <cmath>

namespace kcx::ui {

QPen thresholdPen(bool editable) {
    QPen pen(editable ? QColor(0xc0, 0x1f, 0x1f) : QColor(0x70, 0x70, 0x70));
    pen.setWidthF(editable ? 2.5 : 1.5);
    pen.setStyle(editable ? Qt::SolidLine : Qt::DashLine);
    return pen;
}

void clearChart(QChart* chart) {
    chart->removeAllSeries();
    const auto axes = chart->axes();
    for (QAbstractAxis* axis : axes) {
        chart->removeAxis(axis);
        delete axis;
    }
}

void setUpChartView(QChartView* view) {
    view->setRenderHint(QPainter::Antialiasing);
    view->setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
}

QAbstractAxis* addValueAxis(QChart* chart, Qt::Alignment alignment, bool log, double lo, double hi,
                            const QString& title, bool nice) {
    QAbstractAxis* axis = nullptr;
    if (log) {
        auto* a = new QLogValueAxis;
        a->setBase(10);
        a->setLabelFormat("%g");
        a->setMinorTickCount(-1);
        a->setMinorGridLinePen(QPen(QColor(0, 0, 0, 18), 1));
        axis = a;
    } else {
        auto* a = new QValueAxis;
        a->setLabelFormat("%.4g");
        a->setTickCount(6);
        axis = a;
    }
    setValueRange(axis, lo, hi, nice);
    axis->setTitleText(title);
    chart->addAxis(axis, alignment);
    return axis;
}

void fitLogMinorGrid(QAbstractAxis* axis, double pixels) {
    auto* a = qobject_cast<QLogValueAxis*>(axis);
    if (!a || !(a->min() > 0) || !(a->max() > a->min()))
        return;
    const double decades = std::log10(a->max() / a->min());
    a->setMinorTickCount(pixels / std::max(decades, 1.0) >= 32.0 ? -1 : 0);
}

NiceRange niceRange(double lo, double hi, int ticks) {
    // Qt Charts' loose nice numbers (QValueAxis::applyNiceNumbers), computed here so an
    // axis is touched once, and not at all when its range stays.
    auto nice = [](double x, bool ceiling) {
        const double z = std::pow(10.0, std::floor(std::log10(x)));
        const double q = x / z;
        if (ceiling)
            return (q <= 1.0 ? 1.0 : q <= 2.0 ? 2.0 : q <= 5.0 ? 5.0 : 10.0) * z;
        return (q < 1.5 ? 1.0 : q < 3.0 ? 2.0 : q < 7.0 ? 5.0 : 10.0) * z;
    };
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || ticks < 2)
        return {lo, hi, ticks};
    const double range = nice(hi - lo, true);
    const double step = nice(range / (ticks - 1), false);
    const double a = std::floor(lo / step), b = std::ceil(hi / step);
    return {a * step, b * step, int(b - a) + 1};
}

void setValueRange(QAbstractAxis* axis, double lo, double hi, bool nice) {
    if (auto* a = qobject_cast<QLogValueAxis*>(axis)) {
        if (a->min() != lo || a->max() != hi)
            a->setRange(lo, hi);
    } else if (auto* v = qobject_cast<QValueAxis*>(axis)) {
        NiceRange r{lo, hi, 6};
        if (nice) {
            r = niceRange(lo, hi, 6);
            // Nice numbers must not push a non-negative range below 0 (a tick at "-1.4e-17").
            if (lo >= 0 && r.lo < 0)
                r.lo = 0;
        }
        if (v->min() != r.lo || v->max() != r.hi)
            v->setRange(r.lo, r.hi);
        if (v->tickCount() != r.ticks)
            v->setTickCount(r.ticks);
    }
}

std::pair<double, double> axisRange(const QAbstractAxis* axis) {
    if (auto* a = qobject_cast<const QValueAxis*>(axis))
        return {a->min(), a->max()};
    if (auto* a = qobject_cast<const QLogValueAxis*>(axis))
        return {a->min(), a->max()};
    return {0, 0};
}

void attach(QAbstractSeries* series, QAbstractAxis* x, QAbstractAxis* y) {
    series->attachAxis(x);
    series->attachAxis(y);
}

std::pair<double, double> padded(double lo, double hi, bool log, double pad) {
    if (log) {
        lo = std::log10(lo);
        hi = std::log10(hi);
    }
    if (!(hi > lo)) {
        const double half = log ? 0.5 : std::max(0.5, std::fabs(lo) * 0.5);
        lo -= half;
        hi += half;
    }
    const double w = (hi - lo) * pad;
    lo -= w;
    hi += w;
    if (log)
        return {std::pow(10.0, lo), std::pow(10.0, hi)};
    return {lo, hi};
}

QString numberText(double v) { return QString::number(v, 'g', 4); }

QString countText(uint64_t n) { return QLocale().toString(qulonglong(n)); }

}  // namespace kcx::ui
