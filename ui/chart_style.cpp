#include "ui/chart_style.h"

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

void setValueRange(QAbstractAxis* axis, double lo, double hi, bool nice) {
    if (auto* a = qobject_cast<QLogValueAxis*>(axis)) {
        a->setRange(lo, hi);
    } else if (auto* v = qobject_cast<QValueAxis*>(axis)) {
        v->setTickCount(6);   // applyNiceNumbers() changes it
        v->setRange(lo, hi);
        if (nice) {
            v->applyNiceNumbers();
            // Nice numbers must not push a non-negative range below 0 (a tick at "-1.4e-17").
            if (lo >= 0 && v->min() < 0)
                v->setMin(0);
        }
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
