#include "ui/charts/position_chart.h"

#include <QLabel>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/style/chart_style.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

PositionChart::PositionChart(QWidget* parent)
    : QWidget(parent), chart_(new QChart), view_(new QChartView(chart_)), caption_(new QLabel) {
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    setUpChartView(view_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_, 1);
    caption_->setWordWrap(true);   // a narrow window wraps it rather than widening the chart
    layout->addWidget(caption_);
    rebuild();
}

PositionChart::~PositionChart() { jobs_.cancel(); }

void PositionChart::setData(std::shared_ptr<const Run> run, std::shared_ptr<const MetricValues> values,
                            const QString& metric) {
    run_ = std::move(run);
    values_ = std::move(values);
    metric_ = metric;
    recompute();
}

void PositionChart::clear() {
    run_.reset();
    values_.reset();
    metric_.clear();
    recompute();
}

void PositionChart::setSliceKey(int key) {
    if (key == sliceKey_)
        return;
    sliceKey_ = key;
    recompute();
}

void PositionChart::setLogY(bool on) {
    if (on == logY_)
        return;
    logY_ = on;
    rebuild();
}

void PositionChart::setMaxBins(size_t bins) {
    bins = std::max<size_t>(bins, 1);
    if (bins == maxBins_)
        return;
    maxBins_ = bins;
    recompute();
}

void PositionChart::setScope(std::shared_ptr<const LazyClauseScope> scope, const QString& name) {
    if (scope == scope_ && name == scopeName_)
        return;
    scope_ = std::move(scope);
    scopeName_ = name;
    recompute();
}

void PositionChart::setStatistic(const PositionStatistic& statistic) {
    if (statistic.kind == statistic_.kind && statistic.q == statistic_.q && statistic.level == statistic_.level &&
        statistic.fewBelow == statistic_.fewBelow && statistic.name == statistic_.name)
        return;
    statistic_ = statistic;
    recompute();
}

void PositionChart::setThresholds(std::vector<ValueLine> lines) {
    // A moved threshold (the usual edit) moves its line and the y range; no rebuild.
    auto drawn = [this](const std::vector<ValueLine>& ls) {
        size_t n = 0;
        for (const ValueLine& l : ls)
            n += (!logY_ || l.value > 0) ? 1 : 0;
        return n;
    };
    const bool inPlace = yAxis_ && lines.size() == lines_.size() && drawn(lines) == lineSeries_.size() &&
                         drawn(lines) == lines.size();
    lines_ = std::move(lines);
    if (!inPlace) {
        rebuild();
        return;
    }
    const double xHi = axisRange(xAxis_).second;
    for (size_t i = 0; i < lines_.size(); ++i) {
        const ValueLine& l = lines_[i];
        lineSeries_[i]->replace(QList<QPointF>{{0, l.value}, {xHi, l.value}});
        lineSeries_[i]->setPen(thresholdPen(l.editable));
        lineSeries_[i]->setName(chartText(QString::fromStdString(l.label) + QStringLiteral(" = ") + numberText(l.value)));
    }
    const auto [lo, hi] = yRange();
    setValueRange(yAxis_, lo, hi);
}

std::pair<double, double> PositionChart::yRange() const {
    double lo = dataLo_, hi = dataHi_;
    for (const ValueLine& l : lines_)
        if (!logY_ || l.value > 0) {
            lo = std::min(lo, l.value);
            hi = std::max(hi, l.value);
        }
    if (!std::isfinite(lo))
        std::tie(lo, hi) = logY_ ? std::pair{0.1, 1.0} : std::pair{0.0, 1.0};
    const bool nonNegative = lo >= 0;
    std::tie(lo, hi) = padded(lo, hi, logY_, 0.05);
    if (nonNegative && !logY_)
        lo = 0;   // means of |r|, KL, ... start at zero
    return {lo, hi};
}

QString PositionChart::caption() const { return caption_->text(); }

void PositionChart::recompute() {
    means_.reset();
    const bool tokenLevel = values_ && run_ && values_->level == MetricLevel::Token &&
                            values_->values.size() == run_->tokenCount();
    if (!tokenLevel) {
        jobs_.cancel();
        rebuild();
        caption_->setText(values_ ? tr("%1 is not a per-token metric: it has no token positions.").arg(metric_)
                                  : QString());
        return;
    }
    auto run = run_;
    auto values = values_;
    const int key = sliceKey_;
    const size_t bins = maxBins_;
    auto scope = scope_;   // built by the job, off the GUI thread
    const PositionStatistic stat = statistic_;
    rebuild();
    caption_->setText(tr("Computing the %1 of %2 per position…").arg(QString::fromStdString(stat.name), metric_));   // before start(): see ChartJobs
    jobs_.start(
        this,
        [run, values, key, bins, scope, stat](const Progress& p) {
            auto mask = scope ? scope->get().tokens : nullptr;
            const uint8_t* in = mask && mask->size() == run->tokenCount() ? mask->data() : nullptr;
            return std::make_shared<const PositionMeans>(computePositionMeans(*run, values->values, key, bins, p, in, stat));
        },
        [this](std::shared_ptr<const PositionMeans> m) {
            if (scope_ && !scope_->get().error.empty())   // built by now: the job asked for it
                scopeName_.clear();
            means_ = std::move(m);
            rebuild();
            emit updated();
        },
        [this](const QString& message) { caption_->setText(message); });
}

void PositionChart::rebuild() {
    clearChart(chart_);
    xAxis_ = yAxis_ = nullptr;
    lineSeries_.clear();
    const PositionMeans* m = means_.get();
    const QString stat = QString::fromStdString(statistic_.name);
    QString title = metric_.isEmpty() ? tr("No metric") : tr("%1 of %2 by token position").arg(stat, metric_);
    if (!metric_.isEmpty() && !scopeName_.isEmpty())
        title += tr(" in %1").arg(scopeName_);
    chart_->setTitle(chartText(title));
    if (!m)
        return;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    std::vector<QLineSeries*> series;
    size_t hidden = 0;
    for (const PositionSeries& ps : m->series) {
        auto* s = new QLineSeries;
        s->setName(chartText(QString::fromStdString(ps.label)));
        QList<QPointF> points;
        for (size_t i = 0; i < ps.x.size(); ++i) {
            if (logY_ && ps.mean[i] <= 0) {
                ++hidden;
                continue;
            }
            points.append({ps.x[i], ps.mean[i]});
            lo = std::min(lo, ps.mean[i]);
            hi = std::max(hi, ps.mean[i]);
        }
        s->replace(points);
        series.push_back(s);
    }
    dataLo_ = lo;
    dataHi_ = hi;
    std::tie(lo, hi) = yRange();
    QAbstractAxis* ax = addValueAxis(chart_, Qt::AlignBottom, false, 0, double(std::max<size_t>(m->longest, 1)),
                                     tr("token position"));
    const double xHi = axisRange(ax).second;
    QAbstractAxis* ay = addValueAxis(chart_, Qt::AlignLeft, logY_, lo, hi,
                                     logY_ ? tr("%1 %2 (log scale)").arg(stat, metric_) : tr("%1 %2").arg(stat, metric_));
    for (QLineSeries* s : series) {
        chart_->addSeries(s);
        attach(s, ax, ay);
    }
    for (const ValueLine& l : lines_) {
        if (logY_ && l.value <= 0)
            continue;
        auto* t = new QLineSeries;
        t->append(0, l.value);
        t->append(xHi, l.value);
        t->setPen(thresholdPen(l.editable));
        t->setName(chartText(QString::fromStdString(l.label) + QStringLiteral(" = ") + numberText(l.value)));
        chart_->addSeries(t);
        attach(t, ax, ay);
        lineSeries_.push_back(t);
    }
    xAxis_ = ax;
    yAxis_ = ay;
    QString text = tr("Bins of %1 positions; longest sequence %2 tokens").arg(m->binWidth).arg(m->longest);
    if (hidden)
        text += tr(" · %1 bins with a value ≤ 0 not on the log axis").arg(hidden);
    if (m->fewBins)
        text += tr(" · %1 points rest on fewer than %2 values").arg(m->fewBins).arg(statistic_.fewBelow);
    caption_->setText(text);
}

}  // namespace kcx::ui
