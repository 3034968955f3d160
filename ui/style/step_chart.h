// A metric over training steps, as the summary page and the "Over steps" tab draw it: one
// line per series, a series' 95 % interval as a band, horizontal limits (the clause's
// thresholds) and vertical markers (an onset).
#pragma once

#include <QColor>
#include <QString>
#include <QtCharts/QChart>

#include <utility>
#include <vector>

namespace kcx::ui {

struct StepLine {
    QString name;
    std::vector<double> x, y;        // NaN y: no point
    std::vector<double> lo, hi;      // the band (same length as x, NaN where none), or empty
    QColor colour;                   // invalid: the chart's theme colour
};

struct StepChart {
    QString title, yTitle;
    std::vector<StepLine> lines;
    std::vector<std::pair<QString, double>> limits;    // horizontal, name and y
    std::vector<std::pair<QString, double>> markers;   // vertical, name and x
};

// Clears the chart and draws the spec on it.
void drawStepChart(QChart* chart, const StepChart& spec);

}  // namespace kcx::ui
