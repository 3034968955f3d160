#include "core/steps/steps.h"

#include "core/steps/estimate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "core/evaluate/stats.h"
#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics.h"
#include "core/summary/summary.h"
#include "core/summary/summary_views.h"

namespace kcx {

namespace {

StepPointResult pointOf(int64_t step, const Estimate& e) {
    StepPointResult p;
    p.step = step;
    p.value = e.value;
    p.ci = e.ci;
    p.n = e.n;
    p.sequences = e.sequences;
    p.median = e.median;
    p.trimmedMean = e.trimmedMean;
    return p;
}

// Runs the onset test on a series whose points are filled, and fills z, onset and flags'
// steps (the contributors are the caller's).
void testSeries(StepSeries& series, const std::vector<double>& ses, double alpha) {
    std::vector<double> x, se, units;
    std::vector<size_t> at;   // index into series.steps
    for (size_t i = 0; i < series.steps.size(); ++i)
        if (series.steps[i].value && std::isfinite(*series.steps[i].value)) {
            x.push_back(*series.steps[i].value);
            se.push_back(ses[i]);
            units.push_back(double(series.steps[i].sequences));
            at.push_back(i);
        }
    OnsetOptions oo;
    oo.alpha = alpha;
    series.test = detectOnset(x, se, oo, units);
    for (size_t j = 0; j < at.size(); ++j)
        if (std::isfinite(series.test.z[j]))
            series.steps[at[j]].z = series.test.z[j];
    if (series.test.onset)
        series.onsetStep = series.steps[at[*series.test.onset]].step;
    if (series.test.alarm)
        series.alarmStep = series.steps[at[*series.test.alarm]].step;
    std::map<int64_t, StepFlag> flags;
    if (series.onsetStep) {
        flags[*series.onsetStep].step = *series.onsetStep;
        flags[*series.onsetStep].onset = true;
    }
    for (size_t j : series.test.spikes) {
        const int64_t st = series.steps[at[j]].step;
        flags[st].step = st;
        flags[st].spike = true;
    }
    for (auto& [st, f] : flags)
        series.flags.push_back(std::move(f));
}

std::vector<int64_t> baselineSteps(const StepSeries& series) {
    std::vector<int64_t> out;
    for (const auto& p : series.steps)
        if (out.size() < series.test.baseline && p.value && std::isfinite(*p.value))
            out.push_back(p.step);
    return out;
}

}  // namespace

StepsResult stepsOfRun(MetricEngine& engine, const StepsOptions& o, const Progress& progress) {
    const Run& run = engine.run();
    const GroupedValues g = groupRunValues(engine, o.metric, o.perSlice, true, progress, o.scope.get());
    StepsResult r;
    r.metric = o.metric;
    r.aggregate = o.aggregate.text.empty() ? "mean" : o.aggregate.text;
    r.perSlice = o.perSlice;
    r.interval = intervalMethod(o.aggregate, false);
    r.alpha = o.alpha;
    r.sequencesWithoutStep = g.withoutStep;
    r.values = g.metric;
    r.derived = g.derived;
    const std::vector<std::string>& sliceValues = g.sliceValues;
    const std::vector<int64_t>& stepList = g.steps;
    const size_t K = sliceValues.size();
    std::map<int64_t, size_t> stepIndex;
    for (size_t i = 0; i < stepList.size(); ++i)
        stepIndex[stepList[i]] = i;
    const auto& values = g.metric;
    const bool token = values->level == MetricLevel::Token;
    const auto& buckets = g.groups;
    const auto& codeOf = g.codeOf;

    // Estimates, series by series, in the order of the slice values' names (as a summary's).
    std::vector<size_t> order(K);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return sliceValues[x] < sliceValues[y]; });
    std::vector<std::vector<double>> seOf;
    for (size_t c : order) {
        StepSeries series;
        if (!o.perSlice.empty())
            series.slice = {{o.perSlice, sliceValues[c]}};
        std::vector<double> ses;
        bool any = false;
        for (size_t si = 0; si < stepList.size(); ++si) {
            const Estimate e = estimateValues(g.group(si, c), o.aggregate, o.resamples, o.seed + si * 1000003 + c);
            series.steps.push_back(pointOf(stepList[si], e));
            any = any || e.n > 0;
            ses.push_back(e.se);
        }
        if (!any)
            continue;
        r.series.push_back(std::move(series));
        seOf.push_back(std::move(ses));
    }
    r.seriesAlpha = o.alpha / double(std::max<size_t>(1, r.series.size()));
    for (size_t j = 0; j < r.series.size(); ++j) {
        StepSeries& series = r.series[j];
        testSeries(series, seOf[j], r.seriesAlpha);
        if (series.flags.empty())
            continue;
        const size_t c = o.perSlice.empty() ? 0 : size_t(std::find(sliceValues.begin(), sliceValues.end(),
                                                                     series.slice[0].second) - sliceValues.begin());
        // μb: the mean of the baseline steps' values.
        double bs = 0, bn = 0;
        for (int64_t st : baselineSteps(series))
            for (double v : buckets[stepIndex[st] * K + c].values) {
                bs += v;
                bn += 1;
            }
        const double mub = bn > 0 ? bs / bn : 0;
        for (StepFlag& f : series.flags) {
            const SequenceValues& b = buckets[stepIndex[f.step] * K + c];
            std::vector<StepContributor> seqs;
            double total = 0;
            for (size_t i = 0; i < b.seq.size(); ++i) {
                double ex = 0;
                for (size_t k = b.start[i]; k < b.end(i); ++k)
                    ex += b.values[k] - mub;
                if (ex > 0)
                    total += ex;
                seqs.push_back({run.ids[b.seq[i]], -1, ex, 0});
            }
            std::stable_sort(seqs.begin(), seqs.end(), [](const auto& x, const auto& y) { return x.value > y.value; });
            for (size_t i = 0; i < seqs.size() && i < o.top && seqs[i].value > 0; ++i) {
                seqs[i].share = total > 0 ? seqs[i].value / total : 0;
                f.sequences.push_back(seqs[i]);
            }
            if (!token)
                continue;
            std::vector<StepContributor> toks;
            for (uint32_t s : b.seq)
                for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
                    const double v = values->values[i];
                    if (!std::isnan(v) && codeOf(s, i) == int(c) && (!o.scope || (*o.scope)[i]))
                        toks.push_back({run.ids[s], int64_t(i - run.seqBegin(s)), v, 0});
                }
            const size_t k = std::min(o.top, toks.size());
            std::partial_sort(toks.begin(), toks.begin() + std::ptrdiff_t(k), toks.end(),
                              [](const auto& x, const auto& y) { return x.value > y.value; });
            f.tokens.assign(toks.begin(), toks.begin() + std::ptrdiff_t(k));
        }
    }
    return r;
}

StepsResult stepsOfSummary(const RunSummary& sum, const StepsOptions& o) {
    checkGroupedMetric(o.metric);
    if (o.perSlice == kStepKey)
        throw std::invalid_argument("--per-slice step: the steps are the series already");
    StepsResult r;
    r.summary = true;
    r.metric = o.metric;
    r.aggregate = o.aggregate.text.empty() ? "mean" : o.aggregate.text;
    r.perSlice = o.perSlice;
    r.interval = intervalMethod(o.aggregate, true);
    r.alpha = o.alpha;
    const std::vector<int64_t> stepList = summaryStepList(sum, r.sequencesWithoutStep);
    const std::vector<std::string> sliceValues = summarySliceValues(sum, o.perSlice);
    std::vector<std::vector<double>> seOf;
    std::vector<std::vector<std::vector<WorstEntry>>> worstOf;
    for (const std::string& value : sliceValues) {
        StepSeries series;
        if (!o.perSlice.empty())
            series.slice = {{o.perSlice, value}};
        std::vector<double> ses;
        std::vector<std::vector<WorstEntry>> worst;
        bool any = false;
        for (int64_t st : stepList) {
            StepPointResult p;
            p.step = st;
            double se = NAN;
            const auto cell = summaryMetricCell(sum, o.metric, o.perSlice, value, -1, st);
            if (cell && cell->count > 0) {
                any = true;
                const Estimate e = estimateCell(*cell, o.aggregate);
                p = pointOf(st, e);
                se = e.se;
                worst.push_back(cell->worst);
            } else {
                worst.emplace_back();
            }
            series.steps.push_back(p);
            ses.push_back(se);
        }
        if (!any)
            continue;
        r.series.push_back(std::move(series));
        seOf.push_back(std::move(ses));
        worstOf.push_back(std::move(worst));
    }
    if (r.series.empty())
        throw std::invalid_argument("the summary has no value of " + o.metric);
    r.seriesAlpha = o.alpha / double(r.series.size());
    for (size_t j = 0; j < r.series.size(); ++j) {
        StepSeries& series = r.series[j];
        testSeries(series, seOf[j], r.seriesAlpha);
        for (StepFlag& f : series.flags) {
            const size_t si = size_t(std::lower_bound(stepList.begin(), stepList.end(), f.step) - stepList.begin());
            for (const WorstEntry& w : worstOf[j][si])
                if (f.tokens.size() < o.top)
                    (w.position >= 0 ? f.tokens : f.sequences).push_back({w.id, w.position, w.value, 0});
        }
    }
    return r;
}

namespace {
nlohmann::json stepsNumber(const std::optional<double>& v) {
    return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json stepsNumber(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json contributors(const std::vector<StepContributor>& list, bool sequences) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& c : list) {
        nlohmann::json j = {{"id", c.id}};
        if (c.position >= 0)
            j["position"] = c.position;
        if (sequences) {
            j["excess"] = stepsNumber(c.value);
            j["share"] = stepsNumber(c.share);
        } else {
            j["value"] = stepsNumber(c.value);
        }
        a.push_back(std::move(j));
    }
    return a;
}
}  // namespace

nlohmann::json stepsJson(const StepsResult& r) {
    nlohmann::json j;
    j["kcx"] = 1;
    j["metric"] = r.metric;
    j["aggregate"] = r.aggregate;
    j["per_slice"] = r.perSlice.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.perSlice);
    j["input"] = r.summary ? "summary" : "run";
    j["interval"] = r.interval;
    j["alpha"] = r.alpha;
    j["series_alpha"] = r.seriesAlpha;
    j["sequences_without_step"] = r.sequencesWithoutStep;
    nlohmann::json series = nlohmann::json::array();
    for (const StepSeries& s : r.series) {
        nlohmann::json js;
        if (s.slice.empty()) {
            js["slice"] = nullptr;
        } else {
            js["slice"] = nlohmann::json::object();
            for (const auto& [k, v] : s.slice)
                js["slice"][k] = v;
        }
        nlohmann::json steps = nlohmann::json::array();
        for (const StepPointResult& p : s.steps) {
            nlohmann::json jp = {{"step", p.step}, {"value", stepsNumber(p.value)}};
            jp["ci"] = p.ci ? nlohmann::json::array({stepsNumber(p.ci->first), stepsNumber(p.ci->second)}) : nlohmann::json(nullptr);
            jp["n"] = p.n;
            jp["sequences"] = p.sequences;
            jp["median"] = stepsNumber(p.median);
            jp["trimmed_mean"] = stepsNumber(p.trimmedMean);
            jp["z"] = stepsNumber(p.z);
            steps.push_back(std::move(jp));
        }
        js["steps"] = std::move(steps);
        if (s.onsetStep)
            js["onset"] = {{"step", *s.onsetStep}, {"alarm_step", *s.alarmStep}};
        else
            js["onset"] = nullptr;
        const OnsetResult& t = s.test;
        nlohmann::json jt = {{"tested", t.tested}};
        if (!t.tested) {
            jt["reason"] = t.reason;
        } else {
            jt["method"] = "cusum";
            jt["baseline_steps"] = t.baseline;
            jt["level"] = stepsNumber(t.level);
            jt["scale"] = stepsNumber(t.scale);
            jt["standard_errors"] = t.standardErrors;
            jt["pooled"] = t.pooled;
            jt["statistic"] = stepsNumber(t.statistic);
            jt["threshold"] = stepsNumber(t.threshold);
            jt["spike_z"] = stepsNumber(t.spikeThreshold);
            jt["simulations"] = t.simulations;
        }
        js["test"] = std::move(jt);
        nlohmann::json flags = nlohmann::json::array();
        for (const StepFlag& f : s.flags) {
            nlohmann::json jf = {{"step", f.step}, {"onset", f.onset}, {"spike", f.spike}};
            jf["sequences"] = contributors(f.sequences, !r.summary);
            jf["tokens"] = contributors(f.tokens, false);
            flags.push_back(std::move(jf));
        }
        js["flags"] = std::move(flags);
        series.push_back(std::move(js));
    }
    j["series"] = std::move(series);
    return j;
}

}  // namespace kcx
