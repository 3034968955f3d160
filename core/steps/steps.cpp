#include "core/steps/steps.h"

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

constexpr double kZ95 = 1.959963984540054;
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

std::string intervalText(const Aggregate& a, bool summary) {
    if (a.kind == Aggregate::Kind::Count)
        return "none: a count is exact";
    if (meanLike(a))
        return "normal, ratio estimator over sequences (delta method): value ± 1.96 SE";
    if (a.kind == Aggregate::Kind::Sum)
        return "normal over sequence sums: value ± 1.96 SE";
    return summary ? std::string("none: a summary keeps no sequences to resample (the value is within the sketch's 1 %)")
                   : "percentile bootstrap over sequences (2.5 % and 97.5 % of the replicates)";
}

// One (step, slice) bucket of a raw run: its values, sequence by sequence.
struct Bucket {
    std::vector<double> values;
    std::vector<uint32_t> seq;      // sequence index of each run of values
    std::vector<size_t> start;      // where that run starts in values
    void add(uint32_t s, double v) {
        if (seq.empty() || seq.back() != s) {
            seq.push_back(s);
            start.push_back(values.size());
        }
        values.push_back(v);
    }
    size_t end(size_t i) const { return i + 1 < start.size() ? start[i + 1] : values.size(); }
};

double typeSeven(std::vector<double>& v, double q) {
    std::sort(v.begin(), v.end());
    const double h = (double(v.size()) - 1) * q;
    const size_t lo = size_t(std::floor(h));
    return lo + 1 < v.size() ? v[lo] + (h - double(lo)) * (v[lo + 1] - v[lo]) : v.back();
}

struct Estimate {
    StepPointResult point;
    double se = NAN;
};

Estimate estimate(const Bucket& b, const StepsOptions& o, uint64_t seed) {
    Estimate e;
    StepPointResult& p = e.point;
    p.n = b.values.size();
    p.sequences = b.seq.size();
    if (b.values.empty())
        return e;
    p.value = applyAggregate(o.aggregate, b.values, 1);
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
    const Aggregate& a = o.aggregate;
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
    reps.reserve(size_t(o.resamples));
    for (int r = 0; r < o.resamples; ++r) {
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
    const MetricInfo* info = findMetric(o.metric);
    if (!info)
        throw std::invalid_argument("unknown metric '" + o.metric + "'");
    if (info->level == MetricLevel::Run)
        throw std::invalid_argument(o.metric + " is a per-run metric (one value per run); kcx steps needs a per-token "
                                               "or per-sequence metric");
    const std::vector<int64_t> seqStep = run.steps();
    StepsResult r;
    r.metric = o.metric;
    r.aggregate = o.aggregate.text.empty() ? "mean" : o.aggregate.text;
    r.perSlice = o.perSlice;
    r.interval = intervalText(o.aggregate, false);
    r.alpha = o.alpha;
    std::vector<int64_t> stepList;
    for (int64_t s : seqStep) {
        if (s >= 0)
            stepList.push_back(s);
        else
            ++r.sequencesWithoutStep;
    }
    std::sort(stepList.begin(), stepList.end());
    stepList.erase(std::unique(stepList.begin(), stepList.end()), stepList.end());
    if (stepList.empty())
        throw std::invalid_argument("the run has no training steps (SPEC 7: a `step` key, a `step` tensor, or "
                                    "trainer step_N folders)");

    // Slice codes.
    std::vector<std::string> sliceValues{""};
    int labelKey = -1;
    std::shared_ptr<const DerivedCodes> derived;
    if (!o.perSlice.empty()) {
        if (o.perSlice == kStepKey)
            throw std::invalid_argument("--per-slice step: the steps are the series already");
        if (isDerivedKey(o.perSlice)) {
            if (auto why = checkDerivedKey(o.perSlice))
                throw std::invalid_argument(*why);
            derived = engine.derived().get(o.perSlice);
            sliceValues = derived->values;
        } else {
            labelKey = run.slices.keyIndex(o.perSlice);
            if (labelKey < 0)
                throw std::invalid_argument("the run has no slice key '" + o.perSlice + "'");
            sliceValues = run.slices.values[size_t(labelKey)];
        }
    }
    const auto values = engine.get(o.metric, progress);
    if (!values->supported())
        throw std::invalid_argument("the run has no value of " + o.metric + " (it needs " + info->needs + ")");
    const size_t K = sliceValues.size();
    std::map<int64_t, size_t> stepIndex;
    for (size_t i = 0; i < stepList.size(); ++i)
        stepIndex[stepList[i]] = i;
    std::vector<Bucket> buckets(stepList.size() * K);
    const bool token = values->level == MetricLevel::Token;
    auto codeOf = [&](size_t s, size_t i) -> int {
        if (o.perSlice.empty())
            return 0;
        if (derived)
            return derived->code(s, i);
        const int32_t c = run.slices.codes[s * run.slices.keys.size() + size_t(labelKey)];
        return c;
    };
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        if (seqStep[s] < 0)
            continue;
        const size_t si = stepIndex[seqStep[s]];
        if (token) {
            for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
                const double v = values->values[i];
                const int c = codeOf(s, i);
                if (std::isnan(v) || c < 0)
                    continue;
                buckets[si * K + size_t(c)].add(uint32_t(s), v);
            }
        } else {
            const double v = values->values[s];
            const int c = derived && derived->level == DerivedLevel::Token ? -1 : codeOf(s, 0);
            if (!std::isnan(v) && c >= 0)
                buckets[si * K + size_t(c)].add(uint32_t(s), v);
        }
    }
    if (derived && derived->level == DerivedLevel::Token && !token)
        throw std::invalid_argument(o.perSlice + " is a per-token key; " + o.metric +
                                    " has one value per sequence");

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
            Estimate e = estimate(buckets[si * K + c], o, o.seed + si * 1000003 + c);
            e.point.step = stepList[si];
            any = any || e.point.n > 0;
            series.steps.push_back(e.point);
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
            const Bucket& b = buckets[stepIndex[f.step] * K + c];
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
                    if (!std::isnan(v) && codeOf(s, i) == int(c))
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
    const MetricInfo* info = findMetric(o.metric);
    if (!info)
        throw std::invalid_argument("unknown metric '" + o.metric + "'");
    if (info->level == MetricLevel::Run)
        throw std::invalid_argument(o.metric + " is a per-run metric (one value per run); kcx steps needs a per-token "
                                               "or per-sequence metric");
    if (o.perSlice == kStepKey)
        throw std::invalid_argument("--per-slice step: the steps are the series already");
    StepsResult r;
    r.summary = true;
    r.metric = o.metric;
    r.aggregate = o.aggregate.text.empty() ? "mean" : o.aggregate.text;
    r.perSlice = o.perSlice;
    r.interval = intervalText(o.aggregate, true);
    r.alpha = o.alpha;
    std::vector<int64_t> stepList;
    for (int64_t s : sum.steps())
        if (s >= 0)
            stepList.push_back(s);
    if (auto none = sum.cells.find(CellKey{-1, "", "", -1}); none != sum.cells.end())
        r.sequencesWithoutStep = none->second.sequences;
    if (stepList.empty())
        throw std::invalid_argument("the summary has no training steps (its runs had no `step`)");
    std::vector<std::string> sliceValues{""};
    if (!o.perSlice.empty()) {
        sliceValues.clear();
        for (const auto& [k, d] : sum.cells)
            if (k.key == o.perSlice && k.pos == -1)
                sliceValues.push_back(k.value);
        std::sort(sliceValues.begin(), sliceValues.end());
        sliceValues.erase(std::unique(sliceValues.begin(), sliceValues.end()), sliceValues.end());
        if (sliceValues.empty())
            throw std::invalid_argument("the summary has no slice key '" + o.perSlice + "'");
    }
    const Aggregate& a = o.aggregate;
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
                const MetricCell& c = *cell;
                any = true;
                p.n = c.count;
                p.sequences = c.sequences;
                p.median = sketchQuantile(c, 0.5);
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
                if (std::isfinite(se))
                    p.ci = std::pair{*p.value - kZ95 * se, *p.value + kZ95 * se};
                worst.push_back(c.worst);
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
nlohmann::json num(const std::optional<double>& v) {
    return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json contributors(const std::vector<StepContributor>& list, bool sequences) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& c : list) {
        nlohmann::json j = {{"id", c.id}};
        if (c.position >= 0)
            j["position"] = c.position;
        if (sequences) {
            j["excess"] = num(c.value);
            j["share"] = num(c.share);
        } else {
            j["value"] = num(c.value);
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
            nlohmann::json jp = {{"step", p.step}, {"value", num(p.value)}};
            jp["ci"] = p.ci ? nlohmann::json::array({num(p.ci->first), num(p.ci->second)}) : nlohmann::json(nullptr);
            jp["n"] = p.n;
            jp["sequences"] = p.sequences;
            jp["median"] = num(p.median);
            jp["trimmed_mean"] = num(p.trimmedMean);
            jp["z"] = num(p.z);
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
            jt["level"] = num(t.level);
            jt["scale"] = num(t.scale);
            jt["standard_errors"] = t.standardErrors;
            jt["pooled"] = t.pooled;
            jt["statistic"] = num(t.statistic);
            jt["threshold"] = num(t.threshold);
            jt["spike_z"] = num(t.spikeThreshold);
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
