#include "core/summary/summary_views.h"

#include <cmath>
#include <map>
#include <set>

#include <cstdio>
#include "core/metrics/derived_slices.h"

namespace kcx {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();


// A cell's entry for a metric, or the one implied for a metric the summary lacks inputs for
// (RunSummary::metric; in `implied`, which the caller keeps while it reads the result).
const MetricCell* metricOf(const RunSummary& s, const CellData& d, const std::string& metric, MetricCell& implied) {
    return s.metric(d, metric, implied);
}

void mergeInto(std::optional<MetricCell>& into, const MetricCell& c) {
    if (!into)
        into = c;
    else
        into->merge(c);
}

}  // namespace

std::string cellStatName(const CellStatSpec& spec) {
    switch (spec.stat) {
    case CellStat::Mean: return "mean";
    case CellStat::Max: return "max";
    case CellStat::Count: return "count";
    case CellStat::Quantile: {
        char q[32];
        std::snprintf(q, sizeof q, "%g", spec.q * 100);
        std::string name = "p";   // appended, not added: GCC 12 warns (-Wrestrict) on "p" + std::string
        name.append(q).append(" (sketch)");
        return name;
    }
    }
    return "?";
}

double cellStat(const MetricCell& cell, const CellStatSpec& spec) {
    if (spec.stat == CellStat::Count)
        return double(cell.count);
    if (cell.count == 0)
        return kNaN;
    switch (spec.stat) {
    case CellStat::Mean: return cell.mean();
    case CellStat::Max: return cell.max;
    case CellStat::Quantile: return sketchQuantile(cell, spec.q).value_or(kNaN);
    case CellStat::Count: break;
    }
    return kNaN;
}

double meanStandardError(const MetricCell& cell) {
    if (cell.count == 0 || cell.sequences < 2)
        return kNaN;
    const long double n = (long double)cell.count, m = (long double)cell.sequences;
    const long double mu = (long double)cell.sum.value() / n;
    const long double resid = (long double)cell.seqSumSq.value() - 2 * mu * (long double)cell.seqSumCount.value() +
                              mu * mu * (long double)cell.seqCountSq.value();
    return double(std::sqrt(std::max<long double>(resid, 0) / (n * n) * m / (m - 1)));
}

std::optional<MetricCell> summaryMetricCell(const RunSummary& s, const std::string& metric, const std::string& key,
                                            const std::string& value, int pos, std::optional<int64_t> step) {
    MetricCell implied;
    std::optional<MetricCell> out;
    if (step) {
        auto it = s.cells.find(CellKey{*step, key, value, pos});
        if (it != s.cells.end())
            if (const MetricCell* c = metricOf(s, it->second, metric, implied))
                out = *c;
    } else {
        for (const auto& [k, d] : s.cells)
            if (k.pos == pos && k.key == key && k.value == value)
                if (const MetricCell* c = metricOf(s, d, metric, implied))
                    mergeInto(out, *c);
    }
    if (out && out->count == 0 && out->missing == 0 && out->nonfinite == 0)
        out.reset();
    return out;
}

SummaryOutline summaryOutline(const RunSummary& s) {
    SummaryOutline o;
    std::set<std::string> labelled, derived, present;
    const std::string* lastKey = nullptr;   // cells are ordered by key within a step
    for (const auto& [k, d] : s.cells) {
        if (o.steps.empty() || o.steps.back() != k.step)
            o.steps.push_back(k.step);
        if (!k.key.empty()) {
            if (!lastKey || *lastKey != k.key)
                (isDerivedKey(k.key) ? derived : labelled).insert(k.key);
            lastKey = &k.key;
        } else if (k.pos < 0) {
            o.sequences += d.sequences;
            o.tokens += d.tokens;
            for (const auto& [name, cell] : d.metrics)
                if (cell.count > 0)
                    present.insert(name);
        }
    }
    if (o.steps.size() > 1)
        o.rowKeys.push_back(std::string(kStepKey));
    o.rowKeys.insert(o.rowKeys.end(), labelled.begin(), labelled.end());
    o.rowKeys.insert(o.rowKeys.end(), derived.begin(), derived.end());
    for (const MetricInfo& m : metricCatalog())
        if (present.count(m.name))
            o.metrics.push_back(m.name);
    return o;
}

std::vector<std::string> summaryRowKeys(const RunSummary& s) { return summaryOutline(s).rowKeys; }

std::vector<std::string> summaryMetrics(const RunSummary& s) { return summaryOutline(s).metrics; }

double SummaryGrid::minValue() const {
    double m = kNaN;
    for (double v : values)
        if (!std::isnan(v) && !(v >= m))
            m = v;
    return m;
}

double SummaryGrid::maxValue() const {
    double m = kNaN;
    for (double v : values)
        if (!std::isnan(v) && !(v <= m))
            m = v;
    return m;
}

SummaryGrid summaryGrid(const RunSummary& s, const std::string& metric, const std::string& rowKey,
                        std::optional<int64_t> step, const CellStatSpec& stat) {
    MetricCell implied;
    SummaryGrid g;
    g.metric = metric;
    g.rowKey = rowKey;
    g.stat = stat;
    const std::vector<std::string>& pos = positionBucketNames();
    g.columns.push_back("all positions");
    g.columns.insert(g.columns.end(), pos.begin(), pos.end());
    const size_t C = g.columns.size();
    const bool bySteps = rowKey == kStepKey;
    // One pass over the cells: the accumulator of each (row, column).
    std::map<std::string, size_t> rowOf;           // value -> row (not "step" rows)
    std::map<int64_t, size_t> stepRow;             // step -> row ("step" rows)
    std::vector<std::optional<MetricCell>> acc;
    auto addRow = [&](const std::string& label, const std::string& key, const std::string& value,
                      std::optional<int64_t> rowStep) {
        g.rows.push_back(label);
        for (size_t c = 0; c < C; ++c)
            g.places.push_back({key, value, int(c) - 1, rowStep});
        acc.resize(g.rows.size() * C);
        return g.rows.size() - 1;
    };
    addRow("all", "", "", bySteps ? std::nullopt : step);
    if (bySteps) {
        for (int64_t st : s.steps())
            stepRow[st] = addRow(st < 0 ? "no step" : "step " + std::to_string(st), "", "", st);
    } else if (!rowKey.empty()) {
        std::set<std::string> values;
        for (const auto& [k, d] : s.cells)
            if (k.key == rowKey)
                values.insert(k.value);
        for (const std::string& v : values)
            rowOf[v] = addRow(v, rowKey, v, step);
    }
    for (const auto& [k, d] : s.cells) {
        if (!bySteps && step && k.step != *step)
            continue;
        if (!k.key.empty() && (bySteps || k.key != rowKey))   // a cell of no row of this grid
            continue;
        const MetricCell* c = metricOf(s, d, metric, implied);
        if (!c)
            continue;
        const size_t col = size_t(k.pos + 1);
        if (k.key.empty())
            mergeInto(acc[col], *c);   // the "all" row
        if (bySteps) {
            mergeInto(acc[stepRow.at(k.step) * C + col], *c);
        } else if (!rowKey.empty() && k.key == rowKey) {
            mergeInto(acc[rowOf[k.value] * C + col], *c);
        }
    }
    g.values.assign(acc.size(), kNaN);
    g.counts.assign(acc.size(), 0);
    for (size_t i = 0; i < acc.size(); ++i)
        if (acc[i]) {
            g.counts[i] = acc[i]->count;
            g.values[i] = cellStat(*acc[i], stat);
            if (acc[i]->count == 0 && stat.stat == CellStat::Count && acc[i]->missing + acc[i]->nonfinite == 0)
                g.values[i] = kNaN;
        }
    return g;
}

std::vector<StepPoint> summarySteps(const RunSummary& s, const std::string& metric, const std::string& key,
                                    const std::string& value, int pos, const CellStatSpec& stat) {
    MetricCell implied;
    std::vector<StepPoint> out;
    for (const auto& [k, d] : s.cells) {   // ordered by step first
        if (k.pos != pos || k.key != key || k.value != value)
            continue;
        const MetricCell* c = metricOf(s, d, metric, implied);
        if (!c)
            continue;
        StepPoint p;
        p.step = k.step;
        p.count = c->count;
        p.sequences = c->sequences;
        p.value = cellStat(*c, stat);
        if (stat.stat == CellStat::Mean && c->count) {
            const double se = meanStandardError(*c);
            if (std::isfinite(se)) {
                p.lo = p.value - 1.96 * se;
                p.hi = p.value + 1.96 * se;
            }
        }
        out.push_back(p);
    }
    return out;
}

std::vector<WorstEntry> summaryWorst(const RunSummary& s, const std::string& metric, const std::string& key,
                                     const std::string& value, int pos, std::optional<int64_t> step) {
    if (step) {
        const auto c = summaryMetricCell(s, metric, key, value, pos, step);
        return c ? c->worst : std::vector<WorstEntry>{};
    }
    // The worst entries of the merged cell, without merging the rest of it (its sketches over
    // 1,000 steps took the window's GUI thread about 20 ms at every click).
    MetricCell implied, worst;
    for (const auto& [k, d] : s.cells)
        if (k.pos == pos && k.key == key && k.value == value)
            if (const MetricCell* c = metricOf(s, d, metric, implied))
                for (const WorstEntry& e : c->worst)
                    worst.offerWorst(e);
    return worst.worst;
}

}  // namespace kcx
