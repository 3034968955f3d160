#include "ui/heatmap/clause_lens.h"

#include <QStringList>

#include <cmath>

#include "core/metrics/metrics.h"
#include "ui/session/session.h"

namespace kcx::ui {

namespace {

QString lensNumber(double v) { return QString::number(v, 'g', 6); }

}  // namespace

QString scopeText(const Clause& c) {
    QStringList parts;
    for (const auto& [key, values] : c.where.anyOf) {
        QStringList vs;
        for (const auto& v : values)
            vs << QString::fromStdString(v);
        parts << QStringLiteral("%1=%2").arg(QString::fromStdString(key), vs.join(QLatin1Char('|')));
    }
    if (c.positions)
        parts << QObject::tr("positions %1–%2").arg(c.positions->first).arg(c.positions->second - 1);
    return parts.join(QStringLiteral(", "));
}

ClauseLens clauseLens(const Clause& c, Session& session) {
    return clauseLens(
        c, [&](const std::string& which) { return session.threshold(c.id, which); },
        [&] { return session.clauseScope(c); });
}

ClauseLens clauseLens(const Clause& c, MetricEngine& engine) {
    auto written = [&](const std::string& which) -> std::optional<double> {
        const std::optional<Threshold>& t = which == "max" ? c.max : which == "min" ? c.min : c.level;
        return t ? std::optional<double>(t->value) : std::nullopt;
    };
    return clauseLens(c, written, [&] { return clauseTokenScope(c, engine); });
}

ClauseLens clauseLens(const Clause& c, const std::function<std::optional<double>(const std::string&)>& thresholdOf,
                      const std::function<ClauseScope()>& scopeOf) {
    ClauseLens lens;
    lens.clause = QString::fromStdString(c.id);
    lens.metric = QString::fromStdString(c.metric);
    if (!c.perSlice.empty())
        lens.rowKey = QString::fromStdString(c.perSlice);
    else if (!c.where.empty())
        lens.rowKey = QString::fromStdString(c.where.anyOf.begin()->first);
    const MetricInfo* info = findMetric(c.metric);
    if (!info || info->level != MetricLevel::Token) {
        lens.note = QObject::tr("%1 is not on a per-token metric").arg(lens.clause);
        return lens;
    }
    CellStatistic& st = lens.statistic;
    st.clause = lens.clause;
    const auto max = thresholdOf("max"), min = thresholdOf("min");
    auto limit = [&] {
        if (max) {
            st.mark = HeatmapMark::Above;
            st.markLevel = *max;
            st.markText = QObject::tr("max %1").arg(lensNumber(*max));
        } else if (min) {
            st.mark = HeatmapMark::Below;
            st.markLevel = *min;
            st.markText = QObject::tr("min %1").arg(lensNumber(*min));
        }
    };
    using K = Aggregate::Kind;
    if (c.family == Family::Numerical && c.aggregate) {
        const Aggregate& a = *c.aggregate;
        switch (a.kind) {
        case K::Mean: st.aggregate = HeatmapAggregate::Mean; break;
        case K::Max: st.aggregate = HeatmapAggregate::Max; break;
        case K::Min:
            st.aggregate = HeatmapAggregate::Quantile;
            st.quantile = 0;
            break;
        case K::Quantile:
            st.aggregate = HeatmapAggregate::Quantile;
            st.quantile = a.q;
            break;
        case K::FractionAbove:
            st.aggregate = HeatmapAggregate::ShareAbove;
            st.threshold = a.a;
            break;
        case K::FractionOutside:
        case K::Sum:
        case K::Count:
            lens.note = QObject::tr("a cell cannot show %1's %2").arg(lens.clause, QString::fromStdString(a.text));
            return lens;
        }
        st.name = QString::fromStdString(a.text);
        limit();
    } else if (c.family == Family::Statistical && c.test == Clause::Test::Exceedance) {
        const auto level = thresholdOf("level");
        if (!level) {
            lens.note = QObject::tr("%1 has no level").arg(lens.clause);
            return lens;
        }
        st.aggregate = HeatmapAggregate::ShareAbove;
        st.threshold = *level;
        st.name = QObject::tr("share above %1").arg(lensNumber(*level));
        limit();
        if (c.unit == Clause::Unit::Sequence)
            lens.note = QObject::tr("%1 counts sequences; the cells count tokens").arg(lens.clause);
    } else if (c.family == Family::Statistical) {
        st.aggregate = HeatmapAggregate::Mean;
        st.name = QObject::tr("mean");
        limit();
    } else {
        lens.note = QObject::tr("a cell cannot show %1").arg(lens.clause);
        return lens;
    }
    st.fewBelow = fewValuesFor(st.aggregate, st.quantile);
    if (st.aggregate == HeatmapAggregate::ShareAbove && st.mark == HeatmapMark::Above && st.markLevel > 0)
        st.fewBelow = std::max<uint32_t>(st.fewBelow, uint32_t(std::ceil(1.0 / st.markLevel - 1e-9)));
    const ClauseScope scope = scopeOf();
    if (!scope.error.empty()) {
        lens.note = QObject::tr("%1's scope: %2").arg(lens.clause, QString::fromStdString(scope.error));
        return lens;
    }
    st.scope = scope.tokens;
    st.scopeText = scopeText(c);
    lens.has = true;
    return lens;
}

}  // namespace kcx::ui
