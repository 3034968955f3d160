#include "ui/charts/histogram_chart.h"

#include <QLabel>
#include <QVBoxLayout>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>

#include <algorithm>
#include <cmath>

#include "ui/style/chart_style.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

HistogramChart::HistogramChart(QWidget* parent)
    : QWidget(parent), chart_(new QChart), view_(new QChartView(chart_)), caption_(new QLabel) {
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    setUpChartView(view_);
    view_->viewport()->installEventFilter(this);
    view_->viewport()->setMouseTracking(true);
    caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_, 1);
    layout->addWidget(caption_);
    rebuild();
}

HistogramChart::~HistogramChart() { jobs_.cancel(); }

void HistogramChart::setValues(std::shared_ptr<const MetricValues> values, const QString& metric) {
    values_ = std::move(values);
    metric_ = metric;
    recompute();
}

void HistogramChart::clear() { setValues(nullptr, QString()); }

void HistogramChart::setLogX(bool on) {
    if (on == logX_)
        return;
    logX_ = on;
    recompute();
}

void HistogramChart::setLogCount(bool on) {
    autoLog_ = false;   // the user's choice from now on
    if (on == logCount_)
        return;
    logCount_ = on;
    rebuild();
}

void HistogramChart::setAutoLogCount(bool on) {
    autoLog_ = on;
    applyAutoLog();
}

void HistogramChart::applyAutoLog() {
    const Histogram* h = histogram_.get();
    if (!autoLog_ || !h || h->shown == 0 || dragging())
        return;
    // In the tail: fewer than 5 % of the shown values lie beyond a threshold line (above a
    // max or level, below a min).
    bool tail = false;
    for (const ValueLine& l : lines_) {
        if (!std::isfinite(l.value) || l.which == "aggregate")
            continue;
        uint64_t beyond = 0;
        for (size_t b = 0; b < h->counts.size(); ++b) {
            const double mid = 0.5 * (h->edge(b) + h->edge(b + 1));
            beyond += (l.which == "min" ? mid < l.value : mid > l.value) ? h->counts[b] : 0;
        }
        tail = tail || double(beyond) < 0.05 * double(h->shown);
    }
    if (tail != logCount_) {
        logCount_ = tail;
        rebuild();
        emit logCountChanged(tail);
    }
}

void HistogramChart::setScope(std::shared_ptr<const LazyClauseScope> scope, const QString& name) {
    if (scope == scope_ && name == scopeName_)
        return;
    scope_ = std::move(scope);
    scopeName_ = name;
    recompute();
}

void HistogramChart::setObserved(std::optional<Observed> observed) {
    const bool same = observed.has_value() == observed_.has_value() &&
                      (!observed || (observed->value == observed_->value && observed->interval == observed_->interval &&
                                     observed->label == observed_->label));
    if (same)
        return;
    observed_ = std::move(observed);
    rebuild();
}

void HistogramChart::setBinCount(int bins) {
    bins = std::clamp(bins, 1, 10000);
    if (bins == bins_)
        return;
    bins_ = bins;
    recompute();
}

void HistogramChart::recompute() {
    histogram_.reset();
    if (!values_) {   // nothing, or waiting for the values of metric_
        jobs_.cancel();
        rebuild();
        caption_->setText(metric_.isEmpty() ? QString() : tr("Waiting for %1…").arg(metric_));
        return;
    }
    auto values = values_;
    const int bins = bins_;
    const bool logX = logX_;
    auto scope = scope_;   // built by the job, off the GUI thread
    // Before start(): a quick job's result may be applied inside it.
    caption_->setText(tr("Computing the histogram of %1…").arg(metric_));
    jobs_.start(
        this,
        [values, bins, logX, scope](const Progress& p) {
            auto mask = scope ? scope->get().tokens : nullptr;
            if (!mask || mask->size() != values->values.size())   // all, or another length: ignored
                return std::make_shared<const Histogram>(computeHistogram(values->values, bins, logX, p));
            std::vector<double> in;   // the scope's values (NaN kept: counted as missing)
            in.reserve(size_t(std::count(mask->begin(), mask->end(), uint8_t(1))));
            for (size_t i = 0; i < mask->size(); ++i)
                if ((*mask)[i])
                    in.push_back(values->values[i]);
            return std::make_shared<const Histogram>(computeHistogram(in, bins, logX, p));
        },
        [this](std::shared_ptr<const Histogram> h) {
            if (scope_ && !scope_->get().error.empty())   // built by now: the job asked for it
                scopeName_.clear();   // not narrowed after all: the title says so
            histogram_ = std::move(h);
            rebuild();
            applyAutoLog();
            emit updated();
        },
        [this](const QString& message) { caption_->setText(message); });
}

QString HistogramChart::caption() const { return caption_->text(); }

void HistogramChart::setThresholds(std::vector<ValueLine> lines) {
    // A moved threshold (every edit: the panel sets the clause's lines again) moves its line
    // when the lines are the same ones and stay in view. The chart is not rebuilt and the
    // count axis keeps its scale while the user edits: a rebuild was a new Qt Charts layout
    // and repaint on every edit, 20 ms of the window's longest stalls (issue 17).
    if (histogram_ && !dragging() && inPlace(lines)) {
        for (size_t i = 0; i < lines.size(); ++i) {
            lines_[i].value = lines[i].value;
            placeLine(i);
        }
        return;
    }
    lines_ = std::move(lines);
    // A drag survives new lines only when its line is still there.
    if (dragging() && (size_t(dragIndex_) >= lines_.size() || QString::fromStdString(lines_[size_t(dragIndex_)].which) != dragWhich_)) {
        dragIndex_ = -1;
        emit thresholdDragFinished();
    }
    rebuild();
    applyAutoLog();
}

bool HistogramChart::inPlace(const std::vector<ValueLine>& lines) const {
    if (lines.size() != lines_.size() || lineSeries_.size() != lines_.size())
        return false;
    for (size_t i = 0; i < lines.size(); ++i) {
        const ValueLine &a = lines[i], &b = lines_[i];
        if (a.which != b.which || a.editable != b.editable || a.label != b.label)
            return false;
        const bool drawable = std::isfinite(a.value) && (!logX_ || a.value > 0);
        if (drawable != (lineSeries_[i] != nullptr) || (drawable && (a.value < xLo_ || a.value > xHi_)))
            return false;
    }
    return true;
}

void HistogramChart::setThresholdValue(const QString& which, double value) {
    for (size_t i = 0; i < lines_.size(); ++i) {
        if (QString::fromStdString(lines_[i].which) != which || !lines_[i].editable)
            continue;
        lines_[i].value = value;
        if (dragging() || (value >= xLo_ && value <= xHi_))
            placeLine(i);
        else
            rebuild();   // out of view: widen the axis
    }
}

void HistogramChart::rebuild() {
    clearChart(chart_);
    area_ = nullptr;
    lineSeries_.assign(lines_.size(), nullptr);
    const Histogram* h = histogram_.get();
    if (!h) {
        chart_->setTitle(metric_.isEmpty() ? tr("No metric") : chartText(tr("%1: computing…").arg(metric_)));
        return;
    }
    chart_->setTitle(chartText(scopeName_.isEmpty() ? tr("Distribution of %1").arg(metric_)
                                          : tr("Distribution of %1 in %2").arg(metric_, scopeName_)));
    const size_t bins = h->counts.size();
    const double base = logCount_ ? 0.5 : 0.0;
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    for (size_t b = 0; b < bins; ++b) {
        const double y = std::max(base, double(h->counts[b]));
        upper->append(h->edge(b), y);
        upper->append(h->edge(b + 1), y);
    }
    lower->append(h->edge(0), base);
    lower->append(h->edge(bins), base);
    area_ = new QAreaSeries(upper, lower);
    upper->setParent(area_);   // an area series does not own its lines
    lower->setParent(area_);
    area_->setName(tr("%1 values").arg(countText(h->shown)));
    area_->setColor(QColor(0x4c, 0x78, 0xa8, 200));
    area_->setBorderColor(QColor(0x2f, 0x4b, 0x7c));
    chart_->addSeries(area_);

    // The x range covers the bins and every drawable threshold.
    double lo = h->edge(0), hi = h->edge(bins);
    for (const ValueLine& l : lines_)
        if (std::isfinite(l.value) && (!logX_ || l.value > 0)) {
            lo = std::min(lo, l.value);
            hi = std::max(hi, l.value);
        }
    if (observed_ && std::isfinite(observed_->value) && (!logX_ || observed_->value > 0)) {
        lo = std::min(lo, observed_->value);
        hi = std::max(hi, observed_->value);
    }
    std::tie(xLo_, xHi_) = padded(lo, hi, logX_, 0.03);
    if (!logX_ && lo >= 0)
        xLo_ = std::max(xLo_, 0.0);   // a non-negative metric's axis starts at 0
    const double top = std::max<double>(1.0, double(h->maxCount()));
    yLo_ = base;
    yHi_ = logCount_ ? top * 2.0 : top * 1.08;
    QAbstractAxis* ax = addValueAxis(chart_, Qt::AlignBottom, logX_, xLo_, xHi_, logX_ ? tr("%1 (log scale)").arg(metric_) : metric_);
    // A log count axis shows itself by its ticks (1, 10, 100, …): "count (log)" was cut to
    // "count (l…" in narrow windows.
    QAbstractAxis* ay = addValueAxis(chart_, Qt::AlignLeft, logCount_, yLo_, yHi_, tr("count"));
    fitLogMinorGrid(ay, chart_->plotArea().height());   // the last layout's: close enough
    std::tie(xLo_, xHi_) = axisRange(ax);
    std::tie(yLo_, yHi_) = axisRange(ay);
    attach(area_, ax, ay);

    addObserved(ax, ay);
    for (size_t i = 0; i < lines_.size(); ++i) {
        if (!std::isfinite(lines_[i].value) || (logX_ && lines_[i].value <= 0))
            continue;
        auto* s = new QLineSeries;
        s->setPen(thresholdPen(lines_[i].editable));
        chart_->addSeries(s);
        attach(s, ax, ay);
        lineSeries_[i] = s;
        placeLine(i);
    }

    QStringList parts;
    parts << tr("%1 values").arg(countText(h->shown));
    if (h->missing)
        parts << tr("%1 missing").arg(countText(h->missing));
    if (h->nonfinite)
        parts << tr("%1 non-finite").arg(countText(h->nonfinite));
    if (h->nonpositive)
        parts << tr("%1 ≤ 0 (not on the log axis)").arg(countText(h->nonpositive));
    parts << tr("%1 bins").arg(bins);
    caption_->setText(parts.join(QStringLiteral(" · ")));
}

void HistogramChart::addObserved(QAbstractAxis* ax, QAbstractAxis* ay) {
    if (!observed_ || !std::isfinite(observed_->value) || (logX_ && observed_->value <= 0))
        return;
    const QColor colour(0xd9, 0x5f, 0x02);   // orange: the run's value, apart from the red limits
    if (const auto& iv = observed_->interval; iv && std::isfinite(iv->first) && std::isfinite(iv->second)) {
        const double a = std::clamp(iv->first, xLo_, xHi_), b = std::clamp(iv->second, xLo_, xHi_);
        auto* top = new QLineSeries;
        auto* bottom = new QLineSeries;
        top->append(a, yHi_);
        top->append(b, yHi_);
        bottom->append(a, yLo_);
        bottom->append(b, yLo_);
        auto* band = new QAreaSeries(top, bottom);
        top->setParent(band);
        bottom->setParent(band);
        QColor fill = colour;
        fill.setAlpha(50);
        band->setColor(fill);
        band->setBorderColor(Qt::transparent);
        band->setName(tr("95 % CI [%1, %2]").arg(numberText(iv->first), numberText(iv->second)));
        chart_->addSeries(band);
        attach(band, ax, ay);
    }
    auto* line = new QLineSeries;
    line->setPen(QPen(colour, 2, Qt::DashLine));
    const double x = std::clamp(observed_->value, xLo_, xHi_);
    line->append(x, yLo_);
    line->append(x, yHi_);
    line->setName(chartText(tr("%1 = %2").arg(observed_->label, numberText(observed_->value))));
    chart_->addSeries(line);
    attach(line, ax, ay);
}

void HistogramChart::placeLine(size_t i) {
    QLineSeries* s = i < lineSeries_.size() ? lineSeries_[i] : nullptr;
    if (!s)
        return;
    const ValueLine& l = lines_[i];
    const double x = std::clamp(l.value, xLo_, xHi_);
    s->replace(QList<QPointF>{{x, yLo_}, {x, yHi_}});
    s->setName(chartText(QString::fromStdString(l.label) + QStringLiteral(" = ") + numberText(l.value)));
}

}  // namespace kcx::ui
