// ChartsPanel and the selected result: the histogram and the position chart show the
// tokens the result was decided on (the clause's `where` and `positions`, and the result's
// slice), and the histogram marks the result's observed value and its interval.
#include <QStringList>

#include "core/heatmap/heatmap.h"

#include "ui/charts/charts_panel.h"
#include "ui/charts/histogram_chart.h"
#include "ui/charts/position_chart.h"
#include "ui/session/session.h"

namespace kcx::ui {

namespace {

// "precision=fp8" of a result's labels.
QString labelsText(const SliceLabels& labels) {
    QStringList parts;
    for (const auto& [key, value] : labels)
        parts << QStringLiteral("%1=%2").arg(QString::fromStdString(key), QString::fromStdString(value));
    return parts.join(QStringLiteral(", "));
}

// Whether a result's observed value is in its metric's units (a value the histogram's x
// axis can show): a numerical max, min, mean or quantile, or a statistical mean.
bool observedIsAValue(const Clause& c) {
    if (c.family == Family::Statistical)
        return c.test == Clause::Test::Mean;
    if (c.family != Family::Numerical || !c.aggregate)
        return false;
    using K = Aggregate::Kind;
    const K k = c.aggregate->kind;
    return k == K::Max || k == K::Min || k == K::Mean || k == K::Quantile;
}

// The position chart's statistic for clause c: what the clause bounds, per position.
PositionStatistic positionStatisticOf(const Clause& c, const std::optional<double>& level) {
    PositionStatistic st;
    using K = Aggregate::Kind;
    if (c.family == Family::Numerical && c.aggregate) {
        const Aggregate& a = *c.aggregate;
        if (a.kind == K::Quantile || a.kind == K::Max || a.kind == K::Min) {
            st.kind = PositionStatistic::Kind::Quantile;
            st.q = a.kind == K::Quantile ? a.q : a.kind == K::Max ? 1.0 : 0.0;
            st.fewBelow = fewValuesFor(HeatmapAggregate::Quantile, st.q);
            st.name = a.text;
        } else if (a.kind == K::FractionAbove) {
            st.kind = PositionStatistic::Kind::ShareAbove;
            st.level = a.a;
            st.name = "share above " + QString::number(a.a, 'g', 6).toStdString();
        }
    } else if (c.family == Family::Statistical && c.test == Clause::Test::Exceedance && level) {
        st.kind = PositionStatistic::Kind::ShareAbove;
        st.level = *level;
        st.name = "share above " + QString::number(*level, 'g', 6).toStdString();
    }
    return st;
}

}  // namespace

std::vector<ValueLine> ChartsPanel::positionLines(const std::vector<ValueLine>& valueLines) const {
    // A share per position is bounded by the clause's max (a rate), not by its level.
    if (position_->statistic().kind != PositionStatistic::Kind::ShareAbove)
        return valueLines;
    std::vector<ValueLine> out;
    if (const auto max = session_ ? session_->threshold(clause_.toStdString(), "max") : std::nullopt)
        out.push_back({"max", *max, false, clause_.toStdString() + " max (share)"});
    return out;
}

void ChartsPanel::updateScope() {
    auto contract = session_ ? session_->contract() : nullptr;
    const Clause* c = contract ? contract->find(clause_.toStdString()) : nullptr;
    const MetricInfo* info = findMetric(metric_.toStdString());
    if (!c || !session_->run() || QString::fromStdString(c->metric) != metric_ || !info ||
        info->level != MetricLevel::Token) {
        histogram_->setScope(nullptr, QString());
        position_->setScope(nullptr, QString());
        position_->setStatistic({});
        return;
    }
    position_->setStatistic(positionStatisticOf(*c, session_->threshold(c->id, "level")));
    // Built by the charts' jobs: a mask is a byte per token, too slow for the GUI thread.
    const auto scope = session_->clauseScopeSource(*c, slice_ ? &*slice_ : nullptr);
    QStringList parts;
    if (slice_ && !slice_->empty()) {
        parts << labelsText(*slice_);   // a result's labels include its one-valued `where`
    } else {
        for (const auto& [key, values] : c->where.anyOf) {
            QStringList vs;
            for (const auto& v : values)
                vs << QString::fromStdString(v);
            parts << QStringLiteral("%1=%2").arg(QString::fromStdString(key), vs.join(QLatin1Char('|')));
        }
    }
    if (c->positions)
        parts << tr("positions %1–%2").arg(c->positions->first).arg(c->positions->second - 1);
    const bool all = !scope || scope->all();
    const QString name = all ? QString() : tr("%1's scope (%2)").arg(clause_, parts.join(QStringLiteral(", ")));
    histogram_->setScope(all ? nullptr : scope, name);
    position_->setScope(all ? nullptr : scope, name);
}

void ChartsPanel::updateObserved() {
    auto contract = session_ ? session_->contract() : nullptr;
    const Clause* c = contract ? contract->find(clause_.toStdString()) : nullptr;
    const auto& snapshot = session_ ? session_->latest() : EvaluationSnapshot{};
    if (!c || !snapshot.evaluation || QString::fromStdString(c->metric) != metric_ || !observedIsAValue(*c)) {
        histogram_->setObserved(std::nullopt);
        return;
    }
    for (const Result& r : snapshot.evaluation->results) {
        if (r.clause != c->id || !r.observed)
            continue;
        if (slice_ && (!r.slice || *r.slice != *slice_))
            continue;
        HistogramChart::Observed o;
        o.value = *r.observed;
        o.interval = r.ci;
        // The slice is in the chart's title ("in N1's scope (precision=fp8)"): the legend
        // stays short enough for a narrow window.
        o.label = tr("%1 %2").arg(clause_, QString::fromStdString(r.aggregate));
        histogram_->setObserved(o);
        return;
    }
    histogram_->setObserved(std::nullopt);
}

}  // namespace kcx::ui
