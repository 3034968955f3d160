#include "core/steps/compare.h"

#include <cmath>
#include <map>
#include <stdexcept>

#include "core/discover/discover.h"   // benjaminiHochberg
#include "core/metrics/metrics.h"
#include "core/summary/summary.h"

namespace kcx {

namespace {

using Slice = std::vector<std::pair<std::string, std::string>>;

// One side's estimates of one metric, by slice value.
// Keys of the map: the slice value, or "value\x1fcross value" with a cross key.
constexpr char kSep = '\x1f';

std::map<std::string, Estimate> sideEstimates(const EvaluationData& d, MetricEngine* engine, const std::string& metric,
                                              const CompareOptions& o, uint64_t seed, const Progress& progress) {
    std::map<std::string, Estimate> out;
    if (engine) {
        if (!o.crossKey.empty()) {
            // One pass per value of the cross key, its tokens as the scope.
            const GroupedValues cross = groupRunValues(*engine, metric, o.crossKey, false, progress);
            const Run& run = engine->run();
            for (size_t x = 0; x < cross.sliceValues.size(); ++x) {
                std::vector<uint8_t> scope(run.tokenCount(), 0);
                for (size_t s = 0; s < run.sequenceCount(); ++s)
                    for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i)
                        scope[i] = cross.codeOf(s, i) == int(x);
                const GroupedValues g = groupRunValues(*engine, metric, o.perSlice, false, {}, &scope);
                for (size_t c = 0; c < g.sliceValues.size(); ++c) {
                    const SequenceValues& v = g.group(0, c);
                    if (!v.values.empty())
                        out[g.sliceValues[c] + kSep + cross.sliceValues[x]] =
                            estimateValues(v, o.aggregate, o.resamples, seed + 7 * c + 1000 * x);
                }
            }
            engine->release(metric);
            return out;
        }
        const GroupedValues g = groupRunValues(*engine, metric, o.perSlice, false, progress);
        for (size_t c = 0; c < g.sliceValues.size(); ++c) {
            const SequenceValues& v = g.group(0, c);
            if (!v.values.empty())
                out[g.sliceValues[c]] = estimateValues(v, o.aggregate, o.resamples, seed + c);
        }
        engine->release(metric);
        return out;
    }
    if (!o.crossKey.empty())
        throw std::invalid_argument("a second key (" + o.crossKey + ") needs both sides as runs, not summaries");
    checkGroupedMetric(metric);
    for (const std::string& value : summarySliceValues(*d.summary, o.perSlice)) {
        const auto cell = d.summary->total(o.perSlice, value, -1);
        if (!cell)
            continue;
        const auto it = cell->metrics.find(metric);
        if (it != cell->metrics.end() && it->second.count > 0)
            out[value] = estimateCell(it->second, o.aggregate);
    }
    return out;
}

}  // namespace

bool Comparison::anyWorse() const {
    for (const auto& r : results)
        if (r.verdict == "worse")
            return true;
    return false;
}

Comparison compareRuns(const EvaluationData& a, const EvaluationData& b, const CompareOptions& o,
                       const Progress& progress) {
    Comparison out;
    out.aggregate = o.aggregate.text.empty() ? "mean" : o.aggregate.text;
    out.q = o.q;
    const bool summary = a.summary || b.summary;
    out.interval = "B − A ± 1.96 √(SE_A² + SE_B²); each SE: " + intervalMethod(o.aggregate, summary && !(a.run && b.run));
    for (const auto* d : {&a, &b})
        if (!hasStandardError(o.aggregate, d->summary != nullptr))
            throw std::invalid_argument(
                "the " + out.aggregate + " of " + std::string(d == &a ? "A" : "B") + " has no interval over sequences (" +
                intervalMethod(o.aggregate, d->summary != nullptr) + "): compare another aggregate (mean, sum, fraction_above" +
                (d->summary ? ")" : ", a quantile)"));
    MetricOptions mo;
    mo.ppoClip = o.ppoClip;
    mo.threads = o.threads;
    std::unique_ptr<MetricEngine> ea, eb;
    if (a.run)
        ea = std::make_unique<MetricEngine>(a.run, mo);
    if (b.run)
        eb = std::make_unique<MetricEngine>(b.run, mo);
    std::vector<double> ps;
    for (size_t m = 0; m < o.metrics.size(); ++m) {
        const std::string& metric = o.metrics[m];
        const auto sub = [&](size_t part) {
            return progress ? Progress([&, part](double f) {
                return progress((double(2 * m + part) + f) / double(2 * o.metrics.size()));
            })
                            : Progress();
        };
        const auto A = sideEstimates(a, ea.get(), metric, o, o.seed, sub(0));
        const auto B = sideEstimates(b, eb.get(), metric, o, o.seed + 7919, sub(1));
        std::map<std::string, int> values;   // 1: A only, 2: B only, 3: both
        for (const auto& [v, e] : A)
            values[v] |= 1;
        for (const auto& [v, e] : B)
            values[v] |= 2;
        for (const auto& [value, where] : values) {
            Slice slice;
            const size_t sep = value.find(kSep);
            if (!o.perSlice.empty())
                slice = {{o.perSlice, value.substr(0, sep)}};
            if (sep != std::string::npos)
                slice.emplace_back(o.crossKey, value.substr(sep + 1));
            if (where != 3) {
                out.skipped.push_back({metric, slice, std::string("no value in ") + (where == 1 ? "B" : "A")});
                continue;
            }
            CompareResult r;
            r.metric = metric;
            r.slice = slice;
            r.a = A.at(value);
            r.b = B.at(value);
            const double se = std::sqrt(r.a.se * r.a.se + r.b.se * r.b.se);
            if (!r.a.value || !r.b.value || !std::isfinite(se)) {
                out.skipped.push_back({metric, slice, "fewer than two sequences on a side: no interval"});
                continue;
            }
            r.diff = *r.b.value - *r.a.value;
            r.lo = r.diff - kZ95 * se;
            r.hi = r.diff + kZ95 * se;
            r.p = se > 0 ? std::erfc(std::abs(r.diff / se) / std::sqrt(2.0)) : (r.diff == 0 ? 1.0 : 0.0);
            ps.push_back(r.p);
            out.results.push_back(std::move(r));
        }
    }
    const std::vector<double> qs = benjaminiHochberg(ps);
    for (size_t i = 0; i < out.results.size(); ++i) {
        CompareResult& r = out.results[i];
        r.q = qs[i];
        r.verdict = r.q <= o.q && r.diff > 0 ? "worse" : r.q <= o.q && r.diff < 0 ? "better" : "same";
    }
    return out;
}

nlohmann::json compareJson(const Comparison& c) {
    auto num = [](const std::optional<double>& v) {
        return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    auto sliceJson = [](const Slice& s) {
        if (s.empty())
            return nlohmann::json(nullptr);
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [k, v] : s)
            j[k] = v;
        return j;
    };
    nlohmann::json j;
    j["kcx"] = 1;
    j["aggregate"] = c.aggregate;
    j["q"] = c.q;
    j["interval"] = c.interval;
    nlohmann::json results = nlohmann::json::array();
    for (const CompareResult& r : c.results) {
        nlohmann::json x;
        x["metric"] = r.metric;
        x["aggregate"] = c.aggregate;
        x["slice"] = sliceJson(r.slice);
        x["a"] = num(r.a.value);
        x["b"] = num(r.b.value);
        x["diff"] = r.diff;
        x["ci"] = {r.lo, r.hi};
        x["p_value"] = r.p;
        x["q_value"] = r.q;
        x["verdict"] = r.verdict;
        x["n"] = {{"a", r.a.n}, {"b", r.b.n}};
        x["sequences"] = {{"a", r.a.sequences}, {"b", r.b.sequences}};
        results.push_back(std::move(x));
    }
    j["results"] = std::move(results);
    nlohmann::json skipped = nlohmann::json::array();
    for (const CompareSkip& s : c.skipped)
        skipped.push_back({{"metric", s.metric}, {"slice", sliceJson(s.slice)}, {"why", s.why}});
    j["untested"] = std::move(skipped);
    return j;
}

}  // namespace kcx
