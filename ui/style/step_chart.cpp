#include "ui/style/step_chart.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>

#include <cmath>

#include "ui/style/chart_style.h"

namespace kcx::ui {

void drawStepChart(QChart* chart, const StepChart& spec) {
    clearChart(chart);
    chart->setTitle(spec.title);
    double lo = INFINITY, hi = -INFINITY, x0 = INFINITY, x1 = -INFINITY;
    for (const StepLine& l : spec.lines)
        for (size_t i = 0; i < l.x.size(); ++i) {
            if (std::isnan(l.y[i]))
                continue;
            x0 = std::min(x0, l.x[i]);
            x1 = std::max(x1, l.x[i]);
            lo = std::min(lo, l.y[i]);
            hi = std::max(hi, l.y[i]);
            if (i < l.lo.size() && !std::isnan(l.lo[i])) {
                lo = std::min(lo, l.lo[i]);
                hi = std::max(hi, l.hi[i]);
            }
        }
    if (!(x0 <= x1))
        return;   // nothing to draw
    for (const auto& [name, y] : spec.limits) {
        lo = std::min(lo, y);
        hi = std::max(hi, y);
    }
    if (x1 <= x0)
        x0 -= 0.5, x1 += 0.5;
    const auto [ylo, yhi] = padded(lo, hi, false);
    QAbstractAxis* xAxis = addValueAxis(chart, Qt::AlignBottom, false, x0, x1, QObject::tr("step"));
    QAbstractAxis* yAxis = addValueAxis(chart, Qt::AlignLeft, false, ylo, yhi, spec.yTitle);
    const auto [yl, yh] = axisRange(yAxis);
    for (const StepLine& l : spec.lines) {
        auto* line = new QLineSeries;
        line->setName(l.name);
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        for (size_t i = 0; i < l.x.size(); ++i) {
            if (std::isnan(l.y[i]))
                continue;
            line->append(l.x[i], l.y[i]);
            if (i < l.lo.size() && !std::isnan(l.lo[i])) {
                upper->append(l.x[i], l.hi[i]);
                lower->append(l.x[i], l.lo[i]);
            }
        }
        if (upper->count() > 0) {
            auto* area = new QAreaSeries(upper, lower);
            upper->setParent(area);   // an area series does not own its bounds (LeakSanitizer)
            lower->setParent(area);
            area->setName(QObject::tr("95 % interval over sequences"));
            QColor fill = l.colour.isValid() ? l.colour : QColor(0x1f, 0x77, 0xb4);
            fill.setAlpha(60);
            area->setBrush(fill);
            area->setPen(Qt::NoPen);
            chart->addSeries(area);
            attach(area, xAxis, yAxis);
            if (spec.lines.size() > 1)
                chart->legend()->markers(area).first()->setVisible(false);
        } else {
            delete upper;
            delete lower;
        }
        if (l.colour.isValid())
            line->setColor(l.colour);
        chart->addSeries(line);
        attach(line, xAxis, yAxis);
        if (line->count() == 1) {
            auto* dot = new QScatterSeries;
            dot->append(line->at(0));
            dot->setMarkerSize(8);
            chart->addSeries(dot);
            attach(dot, xAxis, yAxis);
            chart->legend()->markers(dot).first()->setVisible(false);
        }
    }
    for (const auto& [name, y] : spec.limits) {
        auto* t = new QLineSeries;
        t->setName(name);
        t->append(x0, y);
        t->append(x1, y);
        t->setPen(thresholdPen(true));
        chart->addSeries(t);
        attach(t, xAxis, yAxis);
    }
    for (const auto& [name, x] : spec.markers) {
        auto* m = new QLineSeries;
        m->setName(name);
        m->append(x, yl);
        m->append(x, yh);
        QPen pen(QColor(0x7f, 0x3f, 0xbf));
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.5);
        m->setPen(pen);
        chart->addSeries(m);
        attach(m, xAxis, yAxis);
    }
}

}  // namespace kcx::ui
