// What the charts share: threshold pens, building axes, number text. (Status colours
// are ui/style/status_style.h's, as everywhere in the window.)
#pragma once

#include <QColor>
#include <QPen>
#include <QString>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

#include <utility>


namespace kcx::ui {

// Antialiased, and repainting one rectangle around what changed. Qt's default (the exact
// region) clips to a region of several rectangles, and the raster engine then intersects
// every grid line with every span of that region: 5 ms of each threshold edit's 36 ms in
// the histogram alone on this project's machines (issue 17). One rectangle is a plain clip.
void setUpChartView(QChartView* view);

// Editable thresholds are solid red; fixed reference levels dashed grey.
QPen thresholdPen(bool editable);

// Removes (and deletes) every series and axis of the chart.
void clearChart(QChart* chart);
// A QValueAxis or QLogValueAxis (base 10) over [lo, hi], titled, added to the chart. A
// linear axis with `nice` widens its range to round tick values (see axisRange()).
QAbstractAxis* addValueAxis(QChart* chart, Qt::Alignment alignment, bool log, double lo, double hi,
                            const QString& title, bool nice = true);
// A log axis's minor grid (2, 3, ... 9 of each decade) only where a decade has room for
// it: at least 32 pixels of `pixels` (the plot's extent along the axis; 0, not laid out
// yet, counts as no room). Denser, the lines merge into a grey band, and a histogram of
// 10M tokens over 7 decades drew 88 of them on every repaint (issue 17).
void fitLogMinorGrid(QAbstractAxis* axis, double pixels);
// [lo, hi] widened to round tick values, with the number of ticks: Qt Charts' "loose nice
// numbers" for about `ticks` ticks.
struct NiceRange {
    double lo, hi;
    int ticks;
};
NiceRange niceRange(double lo, double hi, int ticks);
// Sets the range of an axis made by addValueAxis(), as it would have been made; an axis
// whose range stays is not touched (every change re-lays out its labels).
void setValueRange(QAbstractAxis* axis, double lo, double hi, bool nice = true);
// The range an axis shows.
std::pair<double, double> axisRange(const QAbstractAxis* axis);
// Attaches a series, already added to the chart, to both axes.
void attach(QAbstractSeries* series, QAbstractAxis* x, QAbstractAxis* y);

// [lo, hi] widened by `pad` of its width (by that share of its decades on a log axis),
// and made non-empty.
std::pair<double, double> padded(double lo, double hi, bool log, double pad = 0.04);

// Numbers for captions and legends: up to 4 significant digits, thousands grouped for counts.
QString numberText(double v);
QString countText(uint64_t n);

}  // namespace kcx::ui
