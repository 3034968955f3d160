#include "ui/charts/slice_bars_chart.h"

#include <QCoreApplication>
#include <QCursor>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarLegendMarker>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

#include "ui/style/chart_style.h"
#include "ui/style/status_style.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

namespace {

QString sliceLabel(const Result& r, bool valueOnly) {
    if (!r.slice || r.slice->empty())
        return QCoreApplication::translate("Charts", "all");
    QStringList parts;
    for (const auto& [key, value] : *r.slice)
        parts << (valueOnly ? QString() : QString::fromStdString(key) + QLatin1Char('=')) + QString::fromStdString(value);
    return parts.join(QStringLiteral(", "));
}

// The one slice key every result of the clause has, or "".
std::string sharedKey(const std::vector<Result>& results, const std::string& id) {
    std::string key;
    for (const Result& r : results) {
        if (r.clause != id)
            continue;
        if (!r.slice || r.slice->size() != 1 || (!key.empty() && r.slice->begin()->first != key))
            return {};
        key = r.slice->begin()->first;
    }
    return key;
}

}  // namespace

SliceBarsChart::SliceBarsChart(QWidget* parent) : QWidget(parent), chart_(new QChart), view_(new QChartView(chart_)) {
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    setUpChartView(view_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
    rebuild();
}

std::vector<SliceBar> SliceBarsChart::barsOf(const std::vector<Result>& results, const QString& clause,
                                             QString* key) {
    std::vector<SliceBar> out;
    const std::string id = clause.toStdString();
    const std::string shared = sharedKey(results, id);
    if (key)
        *key = QString::fromStdString(shared);
    for (const Result& r : results) {
        if (r.clause != id)
            continue;
        SliceBar b;
        b.label = sliceLabel(r, !shared.empty());
        b.confidence = r.confidence;
        b.observed = r.observed.has_value();
        b.value = r.observed.value_or(0.0);
        if (r.upper) {
            b.lo = b.value;
            b.hi = *r.upper;
        } else if (r.ci && std::isfinite(r.ci->first) && std::isfinite(r.ci->second)) {   // a quantile's may be one-sided
            b.lo = r.ci->first;
            b.hi = r.ci->second;
        }
        b.status = r.status;
        b.n = r.n;
        b.message = QString::fromStdString(r.message);
        out.push_back(std::move(b));
    }
    return out;
}

void SliceBarsChart::setResults(const std::vector<Result>& results, const QString& clause) {
    clause_ = clause;
    bars_ = barsOf(results, clause, &sliceTitle_);
    thresholds_.clear();
    valueTitle_.clear();
    const std::string id = clause.toStdString();
    auto first = std::find_if(results.begin(), results.end(), [&](const Result& r) { return r.clause == id; });
    if (first != results.end()) {
        if (first->min)
            thresholds_.push_back({QStringLiteral("min"), *first->min});
        if (first->max)
            thresholds_.push_back({QStringLiteral("max"), *first->max});
        const QString metric = QString::fromStdString(first->metric);
        if (first->family == Family::Statistical && first->aggregate == "exceedance")
            valueTitle_ = tr("share of %1 above the level").arg(metric);
        else if (first->family == Family::Statistical)
            valueTitle_ = tr("mean of %1").arg(metric);
        else
            valueTitle_ = tr("%1 of %2").arg(QString::fromStdString(first->aggregate), metric);
    }
    if (built_ && *built_ == shape())
        refresh();
    else
        rebuild();
}

void SliceBarsChart::clear() {
    clause_.clear();
    bars_.clear();
    thresholds_.clear();
    sliceTitle_.clear();
    rebuild();
}

SliceBarsChart::Shape SliceBarsChart::shape() const {
    Shape s{clause_, sliceTitle_, valueTitle_, {}, {}, {}};
    for (const SliceBar& b : bars_) {
        s.categories << chartText(tr("%1 (n=%2)").arg(b.label, countText(b.n)));
        s.whiskers.push_back(b.lo && b.hi);
    }
    for (const auto& [which, v] : thresholds_)
        s.thresholds << which;
    return s;
}

void SliceBarsChart::rebuild() {
    clearChart(chart_);
    built_.reset();
    series_ = nullptr;
    sets_.clear();
    whiskers_.clear();
    lines_.clear();
    valueAxis_ = nullptr;
    if (bars_.empty()) {
        chart_->setTitle(clause_.isEmpty() ? tr("No clause selected") : chartText(tr("No results for %1").arg(clause_)));
        return;
    }
    const Shape shape = this->shape();
    chart_->setTitle(chartText(tr("%1 per slice").arg(clause_)));

    // One bar set per status, all of them always there (a verdict that flips moves a bar
    // between sets, not the chart's structure); a set with no bar has no legend entry.
    series_ = new QStackedBarSeries;
    for (Status st : {Status::Pass, Status::Fail, Status::Inconclusive, Status::Error}) {
        auto* set = new QBarSet(QString::fromUtf8(statusName(st)));
        set->setColor(statusColour(st));
        set->setBorderColor(statusColour(st).darker(130));
        set->append(QList<qreal>(qsizetype(bars_.size()), 0.0));
        series_->append(set);
        sets_.push_back(set);
    }
    series_->setBarWidth(0.6);
    chart_->addSeries(series_);
    connect(series_, &QStackedBarSeries::hovered, this, [this](bool on, int index) {
        if (on && index >= 0 && size_t(index) < bars_.size())
            QToolTip::showText(QCursor::pos(), plainToolTip(bars_[size_t(index)].message), view_);
        else
            QToolTip::hideText();
    });

    auto* ax = new QBarCategoryAxis;
    ax->append(shape.categories);
    ax->setTitleText(chartText(sliceTitle_));
    chart_->addAxis(ax, Qt::AlignBottom);
    valueAxis_ = static_cast<QValueAxis*>(addValueAxis(chart_, Qt::AlignLeft, false, 0, 1, valueTitle_));
    attach(series_, ax, valueAxis_);

    // Whiskers: a vertical segment with caps per bar; one legend entry for all of them.
    bool named = false;
    for (size_t i = 0; i < bars_.size(); ++i) {
        if (!shape.whiskers[i]) {
            whiskers_.push_back(nullptr);
            continue;
        }
        auto* w = new QLineSeries;
        QPen pen(Qt::black);
        pen.setWidthF(1.5);
        w->setPen(pen);
        chart_->addSeries(w);
        attach(w, ax, valueAxis_);
        if (named)
            chart_->legend()->markers(w).value(0)->setVisible(false);
        named = true;
        whiskers_.push_back(w);
    }
    for (size_t i = 0; i < thresholds_.size(); ++i) {
        auto* t = new QLineSeries;
        t->setPen(thresholdPen(true));
        chart_->addSeries(t);
        attach(t, ax, valueAxis_);
        lines_.push_back(t);
    }
    built_ = shape;
    refresh();
}

void SliceBarsChart::refresh() {
    if (!series_)
        return;
    double lo = 0, hi = 0;
    for (const SliceBar& b : bars_) {
        lo = std::min({lo, b.value, b.lo.value_or(b.value)});
        hi = std::max({hi, b.value, b.hi.value_or(b.value)});
    }
    for (const auto& [which, v] : thresholds_) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    // Bars stand on zero: pad the top, and the bottom only when something is negative.
    if (!(hi > lo))
        hi = lo + 1;
    const double pad = 0.08 * (hi - lo);
    hi += pad;
    if (lo < 0)
        lo -= pad;
    setValueRange(valueAxis_, lo, hi);

    for (size_t s = 0; s < sets_.size(); ++s) {
        const Status st = Status(s);
        bool any = false;
        for (size_t i = 0; i < bars_.size(); ++i) {
            const double v = bars_[i].status == st ? bars_[i].value : 0.0;
            any = any || bars_[i].status == st;
            if (sets_[s]->at(qsizetype(i)) != v)
                sets_[s]->replace(qsizetype(i), v);
        }
        for (QLegendMarker* m : chart_->legend()->markers(series_))
            if (static_cast<QBarLegendMarker*>(m)->barset() == sets_[s])
                m->setVisible(any);
    }
    for (size_t i = 0; i < bars_.size(); ++i) {
        QLineSeries* w = whiskers_[i];
        if (!w)
            continue;
        const SliceBar& b = bars_[i];
        const double x = double(i), c = 0.12;
        w->replace(QList<QPointF>{{x - c, *b.hi}, {x + c, *b.hi}, {x, *b.hi}, {x, *b.lo}, {x - c, *b.lo}, {x + c, *b.lo}});
        const QString conf = b.confidence ? tr(" (%1 %)").arg(numberText(100 * *b.confidence)) : QString();
        w->setName((b.lo == b.value ? tr("upper confidence bound") : tr("confidence interval")) + conf);
    }
    for (size_t i = 0; i < thresholds_.size(); ++i) {
        const auto& [which, v] = thresholds_[i];
        lines_[i]->replace(QList<QPointF>{{-0.5, v}, {double(bars_.size()) - 0.5, v}});
        lines_[i]->setName(chartText(tr("%1 = %2").arg(which, numberText(v))));
    }
}

}  // namespace kcx::ui
