// The report's Qt Charts pictures, drawn synchronously on the GUI thread: the histogram of
// the report's metric with its thresholds, the metric by token position per slice, and one
// per-slice bar chart (the window's SliceBarsChart) for every per_slice clause.
#include <QCoreApplication>
#include <QEvent>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QPainter>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "ui/charts/slice_bars_chart.h"
#include "ui/report/report_internal.h"
#include "ui/style/chart_style.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

QImage renderChartImage(QGraphicsScene* scene, QChart* chart, QSize size) {
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setPos(0, 0);
    chart->resize(QSizeF(size));
    // Lay the chart out now (axes, legend, series geometry): its layout requests are posted
    // events. One pass over what is queued, not an event loop.
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    if (chart->layout())
        chart->layout()->activate();
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(1);
    image.fill(Qt::white);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);
    scene->render(&p, QRectF(QPointF(0, 0), QSizeF(size)), QRectF(chart->pos(), QSizeF(size)));
    p.end();
    return image;
}

namespace {

QChart* newChart(const QString& title) {
    auto* chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);
    chart->setTitle(chartText(title));
    QFont f = chart->titleFont();
    f.setBold(true);
    f.setPixelSize(14);
    chart->setTitleFont(f);
    return chart;
}

// One colour per slice value (Tableau 10), the same in every report.
const QColor kLineColours[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59),
                               QColor(0x76, 0xb7, 0xb2), QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48),
                               QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
                               QColor(0xba, 0xb0, 0xac)};

QString lineName(const ValueLine& l) { return QString::fromStdString(l.label) + QStringLiteral(" = ") + numberText(l.value); }

ReportFigure histogramFigure(const Histogram& h, const std::vector<ValueLine>& lines, const QString& metric) {
    QGraphicsScene scene;
    QChart* chart = newChart(QStringLiteral("Distribution of %1").arg(metric));
    scene.addItem(chart);
    // A log count axis: the tail the thresholds are about would be invisible on a linear one.
    const double base = 0.5;
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    const size_t bins = h.counts.size();
    for (size_t b = 0; b < bins; ++b) {
        const double y = std::max(base, double(h.counts[b]));
        upper->append(h.edge(b), y);
        upper->append(h.edge(b + 1), y);
    }
    lower->append(h.edge(0), base);
    lower->append(h.edge(bins), base);
    auto* area = new QAreaSeries(upper, lower);
    upper->setParent(area);   // an area series does not own its lines
    lower->setParent(area);
    area->setName(QStringLiteral("%1 values").arg(countText(h.shown)));
    area->setColor(QColor(0x4c, 0x78, 0xa8, 200));
    area->setBorderColor(QColor(0x2f, 0x4b, 0x7c));
    chart->addSeries(area);
    double lo = h.edge(0), hi = h.edge(bins);
    for (const ValueLine& l : lines)
        if (std::isfinite(l.value)) {
            lo = std::min(lo, l.value);
            hi = std::max(hi, l.value);
        }
    auto [xLo, xHi] = padded(lo, hi, false, 0.03);
    if (lo >= 0)
        xLo = std::max(xLo, 0.0);
    const double top = std::max<double>(1.0, double(h.maxCount())) * 2.0;
    QAbstractAxis* ax = addValueAxis(chart, Qt::AlignBottom, false, xLo, xHi, metric);
    QAbstractAxis* ay = addValueAxis(chart, Qt::AlignLeft, true, base, top, QStringLiteral("count (log scale)"));
    attach(area, ax, ay);
    const auto [x0, x1] = axisRange(ax);
    const auto [y0, y1] = axisRange(ay);
    // Up to four lines: one red each, told apart by their dashes.
    const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
    size_t drawn = 0;
    for (const ValueLine& l : lines) {
        if (!std::isfinite(l.value))
            continue;
        auto* s = new QLineSeries;
        QPen pen = thresholdPen(l.editable);
        if (l.editable)
            pen.setStyle(styles[drawn++ % 4]);
        s->setPen(pen);
        const double x = std::clamp(l.value, x0, x1);
        s->append(x, y0);
        s->append(x, y1);
        s->setName(chartText(lineName(l)));
        chart->addSeries(s);
        attach(s, ax, ay);
    }
    ReportFigure f;
    f.id = "histogram";
    f.title = QStringLiteral("Distribution of %1").arg(metric);
    QStringList parts;
    parts << QStringLiteral("%1 values in %2 equal-width bins; counts on a log scale").arg(countText(h.shown)).arg(bins);
    if (h.missing)
        parts << QStringLiteral("%1 missing").arg(countText(h.missing));
    if (h.nonfinite)
        parts << QStringLiteral("%1 non-finite").arg(countText(h.nonfinite));
    f.caption = parts.join(QStringLiteral("; ")) +
                (lines.empty() ? QStringLiteral(". No clause has a threshold on this metric.")
                               : QStringLiteral(". Vertical lines: the contract's thresholds on %1.").arg(metric));
    f.image = renderChartImage(&scene, chart, QSize(kFigureWidth, kFigureHeight));
    return f;
}

ReportFigure positionFigure(const PositionMeans& m, const QString& metric, const QString& key) {
    QGraphicsScene scene;
    QChart* chart = newChart(key.isEmpty() ? QStringLiteral("Mean %1 by token position").arg(metric)
                                           : QStringLiteral("Mean %1 by token position, per %2").arg(metric, key));
    scene.addItem(chart);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    std::vector<QLineSeries*> series;
    for (const PositionSeries& ps : m.series) {
        auto* s = new QLineSeries;
        s->setName(chartText(QString::fromStdString(ps.label)));
        QList<QPointF> points;
        for (size_t i = 0; i < ps.x.size(); ++i) {
            points.append({ps.x[i], ps.mean[i]});
            lo = std::min(lo, ps.mean[i]);
            hi = std::max(hi, ps.mean[i]);
        }
        s->replace(points);
        QPen pen(kLineColours[series.size() % std::size(kLineColours)]);
        pen.setWidthF(1.8);
        s->setPen(pen);
        series.push_back(s);
    }
    if (!std::isfinite(lo))
        lo = 0, hi = 1;
    const bool nonNegative = lo >= 0;
    std::tie(lo, hi) = padded(lo, hi, false, 0.05);
    if (nonNegative)
        lo = 0;
    QAbstractAxis* ax = addValueAxis(chart, Qt::AlignBottom, false, 0, double(std::max<size_t>(m.longest, 1)),
                                     QStringLiteral("token position"));
    QAbstractAxis* ay = addValueAxis(chart, Qt::AlignLeft, false, lo, hi, QStringLiteral("mean %1").arg(metric));
    for (QLineSeries* s : series) {
        chart->addSeries(s);
        attach(s, ax, ay);
    }
    ReportFigure f;
    f.id = "positions";
    f.title = QStringLiteral("%1 by token position").arg(metric);
    f.caption = QStringLiteral("The mean of %1 over bins of %2 positions (longest sequence %3 tokens)%4.")
                    .arg(metric)
                    .arg(m.binWidth)
                    .arg(m.longest)
                    .arg(key.isEmpty() ? QString() : QStringLiteral(", one line per value of %1").arg(key));
    f.image = renderChartImage(&scene, chart, QSize(kFigureWidth, kFigureHeight));
    return f;
}

ReportFigure barsFigure(const ReportInput& in, const std::string& clause) {
    SliceBarsChart bars;   // the window's chart, filled synchronously
    const QString id = QString::fromStdString(clause);
    bars.setResults(in.evaluation.results, id);
    QFont f = bars.chart()->titleFont();
    f.setBold(true);
    f.setPixelSize(14);
    bars.chart()->setTitleFont(f);
    bars.chart()->setAnimationOptions(QChart::NoAnimation);
    for (QAbstractAxis* axis : bars.chart()->axes(Qt::Horizontal)) {   // long slice labels
        QFont lf = axis->labelsFont();
        lf.setPixelSize(11);
        axis->setLabelsFont(lf);
    }
    ReportFigure fig;
    fig.id = "slices-" + clause;
    fig.title = QStringLiteral("%1 per slice").arg(id);
    const Clause* c = in.contract->find(clause);
    QString what = bars.valueTitle();
    if (c && c->family == Family::Statistical && c->test == Clause::Test::Exceedance)
        what += QStringLiteral(" %1; whiskers reach the one-sided Wilson upper bound, the number compared with max")
                    .arg(c->level ? QStringLiteral("(level %1)").arg(reportNumber(c->level->value)) : QString());
    else if (c && c->family == Family::Statistical)
        what += QStringLiteral("; whiskers: the bootstrap interval, which must lie within the thresholds");
    fig.caption = QStringLiteral("Bars: %1, per value of %2, coloured by status; red lines: the thresholds.")
                      .arg(what, bars.sliceTitle().isEmpty() ? QStringLiteral("the slice") : bars.sliceTitle());
    fig.image = renderChartImage(bars.chartView()->scene(), bars.chart(), QSize(kFigureWidth, kFigureHeight));
    return fig;
}

}  // namespace

void renderReportFigures(const ReportInput& in, ReportData& data) {
    const QString metric = QString::fromStdString(data.metric);
    if (data.histogram)
        data.figures.push_back(histogramFigure(*data.histogram, data.histogramLines, metric));
    if (data.positions && !data.positions->series.empty())
        data.figures.push_back(positionFigure(*data.positions, metric, QString::fromStdString(data.positionsKey)));
    for (const std::string& clause : data.barClauses)
        data.figures.push_back(barsFigure(in, clause));
}

}  // namespace kcx::ui
