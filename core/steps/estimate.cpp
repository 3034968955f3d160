#include "core/steps/estimate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/evaluate/stats.h"
#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics.h"
#include "core/summary/summary.h"
#include "core/summary/summary_views.h"

namespace kcx {

namespace {

constexpr double kTrim = 0.10;   // the trimmed mean drops this share at each end

bool meanLike(const Aggregate& a) {
    return a.kind == Aggregate::Kind::Mean || a.kind == Aggregate::Kind::FractionAbove ||
           a.kind == Aggregate::Kind::FractionOutside;
}

double transformed(const Aggregate& a, double v) {
    switch (a.kind) {
    case Aggregate::Kind::FractionAbove: return v > a.a ? 1 : 0;
    case Aggregate::Kind::FractionOutside: return v < a.a || v > a.b ? 1 : 0;
    default: return v;
    }
}

}  // namespace

std::string intervalMethod(const Aggregate& a, bool summary) {
    if (a.kind == Aggregate::Kind::Count)
        return "none: a count is exact";
    if (meanLike(a))
        return "normal, ratio estimator over sequences (delta method): value ± 1.96 SE";
    if (a.kind == Aggregate::Kind::Sum)
        return "normal over sequence sums: value ± 1.96 SE";
    return summary ? std::string("none: a summary keeps no sequences to resample (the value is within the sketch's 1 %)")
                   : "percentile bootstrap over sequences (2.5 % and 97.5 % of the replicates)";
}

bool hasStandardError(const Aggregate& a, bool summary) {
    if (a.kind == Aggregate::Kind::Count)
        return false;
    return meanLike(a) || a.kind == Aggregate::Kind::Sum || !summary;
}

namespace {

double typeSeven(std::vector<double>& v, double q) {
    std::sort(v.begin(), v.end());
    const double h = (double(v.size()) - 1) * q;
    const size_t lo = size_t(std::floor(h));
    return lo + 1 < v.size() ? v[lo] + (h - double(lo)) * (v[lo + 1] - v[lo]) : v.back();
}

}  // namespace

Estimate estimateValues(const SequenceValues& b, const Aggregate& a, int resamples, uint64_t seed) {
    Estimate e;
    Estimate& p = e;
    p.n = b.values.size();
    p.sequences = b.seq.size();
    if (b.values.empty())
        return e;
    p.value = applyAggregate(a, b.values, 1);
    std::vector<double> sorted = b.values;
    std::sort(sorted.begin(), sorted.end());
    p.median = typeSeven(sorted, 0.5);
    const size_t cut = size_t(std::floor(kTrim * double(sorted.size())));
    double s = 0;
    for (size_t i = cut; i < sorted.size() - cut; ++i)
        s += sorted[i];
    p.trimmedMean = s / double(sorted.size() - 2 * cut);
    const size_t m = b.seq.size();
    if (m < 2 || !p.value)
        return e;
    if (a.kind == Aggregate::Kind::Count)
        return e;
    if (meanLike(a) || a.kind == Aggregate::Kind::Sum) {
        std::vector<double> S(m), N(m);
        double tS = 0, tN = 0;
        for (size_t i = 0; i < m; ++i) {
            for (size_t j = b.start[i]; j < b.end(i); ++j)
                S[i] += transformed(a, b.values[j]);
            N[i] = double(b.end(i) - b.start[i]);
            tS += S[i];
            tN += N[i];
        }
        double ss = 0;
        if (a.kind == Aggregate::Kind::Sum) {
            const double mean = tS / double(m);
            for (size_t i = 0; i < m; ++i)
                ss += (S[i] - mean) * (S[i] - mean);
            e.se = std::sqrt(double(m) / double(m - 1) * ss);
        } else {
            const double mu = tS / tN;
            for (size_t i = 0; i < m; ++i)
                ss += (S[i] - mu * N[i]) * (S[i] - mu * N[i]);
            e.se = std::sqrt(double(m) / double(m - 1) * ss) / tN;
        }
        p.ci = std::pair{*p.value - kZ95 * e.se, *p.value + kZ95 * e.se};
        return e;
    }
    // max, min, quantiles: a percentile bootstrap over sequences.
    Xoshiro256 rng(seed);
    std::vector<double> reps, buf;
    reps.reserve(size_t(resamples));
    for (int r = 0; r < resamples; ++r) {
        buf.clear();
        for (size_t i = 0; i < m; ++i) {
            const size_t u = size_t(rng.below(m));
            buf.insert(buf.end(), b.values.begin() + std::ptrdiff_t(b.start[u]),
                       b.values.begin() + std::ptrdiff_t(b.end(u)));
        }
        if (auto v = applyAggregate(a, buf, 1))
            reps.push_back(*v);
    }
    if (reps.size() < 2)
        return e;
    double mean = 0, var = 0;
    for (double v : reps)
        mean += v;
    mean /= double(reps.size());
    for (double v : reps)
        var += (v - mean) * (v - mean);
    e.se = std::sqrt(var / double(reps.size() - 1));
    const double lo = typeSeven(reps, 0.025), hi = typeSeven(reps, 0.975);
    p.ci = std::pair{lo, hi};
    return e;
}


Estimate estimateCell(const MetricCell& c, const Aggregate& a) {
    Estimate p;
    if (c.count == 0)
        return p;
    p.n = c.count;
    p.sequences = c.sequences;
    p.median = sketchQuantile(c, 0.5);
    double se = NAN;
    switch (a.kind) {
    case Aggregate::Kind::Mean:
        p.value = c.mean();
        se = meanStandardError(c);
        break;
    case Aggregate::Kind::Sum: {
        p.value = c.sum.value();
        const double m = double(c.sequences), S = c.sum.value();
        if (c.sequences >= 2)
            se = std::sqrt(std::max(0.0, m / (m - 1) * (c.seqSumSq.value() - S * S / m)));
        break;
    }
    case Aggregate::Kind::Count: p.value = double(c.count); break;
    case Aggregate::Kind::Max: p.value = c.max; break;
    case Aggregate::Kind::Min: p.value = c.min; break;
    case Aggregate::Kind::Quantile: p.value = sketchQuantile(c, a.q); break;
    case Aggregate::Kind::FractionAbove: {
        // The sketch bounds the count above the level; the midpoint of those bounds.
        const auto [lo, hi] = c.sketch.countAbove(a.a);
        p.value = (double(lo) + double(hi)) / 2 / double(c.count);
        break;
    }
    case Aggregate::Kind::FractionOutside: {
        const auto [alo, ahi] = c.sketch.countAbove(a.b);
        const auto [blo, bhi] = c.sketch.countBelow(a.a);
        p.value = (double(alo + blo) + double(ahi + bhi)) / 2 / double(c.count);
        break;
    }
    }
    p.se = se;
    if (std::isfinite(se))
        p.ci = std::pair{*p.value - kZ95 * se, *p.value + kZ95 * se};
    return p;
}

const MetricInfo* checkGroupedMetric(const std::string& metric) {
    const MetricInfo* info = findMetric(metric);
    if (!info)
        throw std::invalid_argument("unknown metric '" + metric + "'");
    if (info->level == MetricLevel::Run)
        throw std::invalid_argument(metric + " is a per-run metric (one value per run); this needs a per-token or "
                                             "per-sequence metric");
    return info;
}

std::vector<int64_t> summaryStepList(const RunSummary& sum, uint64_t& withoutStep) {
    std::vector<int64_t> steps;
    for (int64_t s : sum.steps())
        if (s >= 0)
            steps.push_back(s);
    withoutStep = 0;
    if (auto none = sum.cells.find(CellKey{-1, "", "", -1}); none != sum.cells.end())
        withoutStep = none->second.sequences;
    if (steps.empty())
        throw std::invalid_argument("the summary has no training steps (its runs had no `step`)");
    return steps;
}

std::vector<std::string> summarySliceValues(const RunSummary& sum, const std::string& key) {
    if (key.empty())
        return {""};
    std::vector<std::string> values;
    for (const auto& [k, d] : sum.cells)
        if (k.key == key && k.pos == -1)
            values.push_back(k.value);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    if (values.empty())
        throw std::invalid_argument("the summary has no slice key '" + key + "'");
    return values;
}

GroupedValues groupRunValues(MetricEngine& engine, const std::string& metric, const std::string& perSlice, bool byStep,
                             const Progress& progress, const std::vector<uint8_t>* scope) {
    const Run& run = engine.run();
    const MetricInfo* info = checkGroupedMetric(metric);
    GroupedValues g;
    std::vector<int64_t> seqStep(run.sequenceCount(), 0);
    if (byStep) {
        seqStep = run.steps();
        if (seqStep.empty())
            seqStep.assign(run.sequenceCount(), -1);
        for (int64_t s : seqStep) {
            if (s >= 0)
                g.steps.push_back(s);
            else
                ++g.withoutStep;
        }
        std::sort(g.steps.begin(), g.steps.end());
        g.steps.erase(std::unique(g.steps.begin(), g.steps.end()), g.steps.end());
        if (g.steps.empty())
            throw std::invalid_argument("the run has no training steps (SPEC 7: a `step` key, a `step` tensor, or "
                                        "trainer step_N folders)");
    } else {
        g.steps = {0};
    }
    g.sliceValues = {""};
    int labelKey = -1;
    std::shared_ptr<const DerivedCodes> derived;
    if (!perSlice.empty()) {
        if (perSlice == kStepKey && byStep)
            throw std::invalid_argument("--per-slice step: the steps are the series already");
        if (isDerivedKey(perSlice)) {
            if (auto why = checkDerivedKey(perSlice))
                throw std::invalid_argument(*why);
            derived = engine.derived().get(perSlice);
            g.derived = derived;
            g.sliceValues = derived->values;
        } else {
            labelKey = run.slices.keyIndex(perSlice);
            if (labelKey < 0)
                throw std::invalid_argument("the run has no slice key '" + perSlice + "'");
            g.sliceValues = run.slices.values[size_t(labelKey)];
        }
    }
    g.metric = engine.get(metric, progress);
    if (!g.metric->supported())
        throw std::invalid_argument("the run has no value of " + metric + " (it needs " + info->needs + ")");
    const bool token = g.metric->level == MetricLevel::Token;
    if (derived && derived->level == DerivedLevel::Token && !token)
        throw std::invalid_argument(perSlice + " is a per-token key; " + metric + " has one value per sequence");
    const size_t keys = run.slices.keys.size();
    const std::vector<int32_t>* codes = &run.slices.codes;
    g.codeOf = [perSlice, derived, labelKey, keys, codes](size_t s, size_t i) -> int {
        if (perSlice.empty())
            return 0;
        if (derived)
            return derived->code(s, i);
        return (*codes)[s * keys + size_t(labelKey)];
    };
    std::map<int64_t, size_t> stepIndex;
    for (size_t i = 0; i < g.steps.size(); ++i)
        stepIndex[g.steps[i]] = i;
    const size_t K = g.sliceValues.size();
    g.groups.resize(g.steps.size() * K);
    const auto& values = g.metric->values;
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        if (seqStep[s] < 0)
            continue;
        const size_t si = stepIndex[seqStep[s]];
        if (token) {
            for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
                const double v = values[i];
                const int c = g.codeOf(s, i);
                if (!std::isnan(v) && c >= 0 && (!scope || (*scope)[i]))
                    g.groups[si * K + size_t(c)].add(uint32_t(s), v);
            }
        } else {
            const double v = values[s];
            const int c = g.codeOf(s, run.seqBegin(s));
            // a sequence metric is in scope when any of its tokens is (clause_scope.h)
            bool in = !scope;
            for (size_t i = run.seqBegin(s); !in && i < run.seqEnd(s); ++i)
                in = (*scope)[i] != 0;
            if (!std::isnan(v) && c >= 0 && in)
                g.groups[si * K + size_t(c)].add(uint32_t(s), v);
        }
    }
    return g;
}

}  // namespace kcx
