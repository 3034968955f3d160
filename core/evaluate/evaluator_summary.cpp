// Deciding a contract's clauses from a summary's cells (evaluator_summary.h). The rules
// mirror evaluator_clauses.cpp and evaluator_numerical.cpp clause by clause; what a summary
// cannot know exactly turns into `inconclusive` with the reason, never into a guess.
#include "core/evaluate/evaluator_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/evaluate/evaluator_internal.h"
#include "core/evaluate/stats.h"
#include "core/formats/loader.h"
#include "core/metrics/derived_slices.h"
#include "core/summary/summary_views.h"

namespace kcx {

namespace {

using detail::fmt;


// One group of a clause on a summary: the merged cell of its values.
struct SGroup {
    std::optional<SliceLabels> slice;
    MetricCell cell;
};

struct SScope {
    std::vector<SGroup> groups;
    std::string error;          // status error (what the raw run would also refuse)
    std::string unresolved;     // status inconclusive: the summary cannot say
};

Result base(const Clause& c, const std::optional<SliceLabels>& slice) {
    Result r;
    r.clause = c.id;
    r.family = c.family;
    r.severity = c.severity;
    r.metric = c.metric;
    r.slice = slice;
    return r;
}

// The cells of a clause's scope, grouped by its per_slice.
SScope scopeOf(const Clause& c, const RunSummary& s, MetricLevel level) {
    SScope out;
    const bool token = level == MetricLevel::Token;
    std::string key;                        // one slice key (not step, not the position axis)
    std::set<std::string> values;
    std::optional<std::set<int64_t>> steps;
    std::optional<std::set<int>> pos;
    for (const auto& [k, accepted] : c.where.anyOf) {
        if (k == kStepKey) {
            steps.emplace();
            for (const std::string& v : accepted)
                if (auto n = stepNumber(v))
                    steps->insert(*n);
        } else if (k == "derived.pos_bucket") {
            pos.emplace();
            for (const std::string& v : accepted) {
                auto it = std::find(positionBucketNames().begin(), positionBucketNames().end(), v);
                if (it != positionBucketNames().end())
                    pos->insert(int(it - positionBucketNames().begin()));
            }
        } else if (key.empty()) {
            key = k;
            values.insert(accepted.begin(), accepted.end());
        } else {
            out.unresolved = "where: names two slice keys ('" + key + "' and '" + k +
                             "'); a summary keeps each key's cells apart, so only the run can answer";
            return out;
        }
    }
    std::string groupBy;
    if (!c.perSlice.empty()) {
        if (c.perSlice == kStepKey || c.perSlice == "derived.pos_bucket") {
            groupBy = c.perSlice;
        } else if (key.empty() || key == c.perSlice) {
            key = c.perSlice;
            groupBy = c.perSlice;
        } else {
            out.unresolved = "where: on '" + key + "' with per_slice: '" + c.perSlice +
                             "' needs cells of both keys at once; a summary keeps each key's cells apart";
            return out;
        }
    }
    if (c.positions) {
        if (!token) {
            out.error = "positions apply to per-token metrics; '" + c.metric + "' is per sequence";
            return out;
        }
        // [a, b) must be a union of position buckets; b may also reach past the longest sequence.
        const std::optional<CellData> all = s.total();
        uint64_t longest = 0;
        if (all)
            if (auto it = all->metrics.find("length"); it != all->metrics.end() && it->second.count)
                longest = uint64_t(it->second.max);
        const auto [a, b] = *c.positions;
        std::set<int> covered;
        bool aligned = false;
        for (size_t i = 0; i < std::size(kPositionEdges); ++i)
            if (int64_t(kPositionEdges[i]) == a)
                aligned = true;
        for (size_t i = 0; aligned && i < std::size(kPositionEdges); ++i) {
            const int64_t lo = int64_t(kPositionEdges[i]);
            const int64_t hi = i + 1 < std::size(kPositionEdges) ? int64_t(kPositionEdges[i + 1]) : INT64_MAX;
            if (lo >= a && lo < b) {
                if (hi > b && uint64_t(b) < longest) {   // the bucket reaches past b, and tokens lie there
                    aligned = false;
                    break;
                }
                covered.insert(int(i));
            }
        }
        if (!aligned) {
            out.unresolved = "positions [" + std::to_string(a) + ", " + std::to_string(b) +
                             ") do not fall on the summary's position buckets (edges 0, 64, 256, 1024, 4096)";
            return out;
        }
        if (pos) {
            std::set<int> both;
            for (int p : covered)
                if (pos->count(p))
                    both.insert(p);
            pos = both;
        } else {
            pos = covered;
        }
    }
    if (!token && (pos || groupBy == "derived.pos_bucket")) {
        out.error = "'derived.pos_bucket' is per token; '" + c.metric + "' is per sequence";
        return out;
    }
    const bool tokenKey = isDerivedKey(key) && derivedLevel(key) == DerivedLevel::Token;
    if (!token && tokenKey) {
        out.error = "'" + key + "' is per token; '" + c.metric + "' is per sequence";
        return out;
    }
    if (tokenKey && (pos || groupBy == "derived.pos_bucket")) {
        out.unresolved = "'" + key + "' crossed with position buckets: a summary keeps per-token keys over all positions only";
        return out;
    }
    // The groups: every value the key (or step, or position bucket) has in the summary.
    std::map<std::string, size_t> groupIndex;
    std::vector<std::pair<std::string, SGroup>> ordered;
    auto addGroup = [&](const std::string& label, const std::string& sortKey) {
        if (groupIndex.count(sortKey))
            return;
        groupIndex[sortKey] = 0;
        SGroup g;
        g.slice = SliceLabels{{groupBy, label}};
        ordered.push_back({sortKey, std::move(g)});
    };
    bool keySeen = key.empty();
    for (const auto& [k, cell] : s.cells) {
        if (!key.empty() && k.key == key)
            keySeen = true;
        if (groupBy == kStepKey && k.step >= 0) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%020lld", (long long)k.step);
            addGroup(std::to_string(k.step), buf);
        } else if (groupBy == "derived.pos_bucket" && k.pos >= 0) {
            addGroup(positionBucketNames()[size_t(k.pos)], std::to_string(k.pos));
        } else if (!groupBy.empty() && groupBy != kStepKey && groupBy != "derived.pos_bucket" && k.key == groupBy &&
                   k.pos < 0) {
            const DerivedKeyInfo* info = findDerivedKey(groupBy);
            std::string sortKey = k.value;
            if (info) {   // catalogue order
                auto it = std::find(info->values.begin(), info->values.end(), k.value);
                char buf[16];
                std::snprintf(buf, sizeof buf, "%06d", int(it - info->values.begin()));
                sortKey = buf;
            }
            addGroup(k.value, sortKey);
        }
    }
    if (!keySeen) {
        out.error = "the summary has no slice key '" + key + "'" + (c.perSlice == key ? " (per_slice)" : "");
        return out;
    }
    std::sort(ordered.begin(), ordered.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    if (groupBy.empty()) {
        ordered.clear();
        ordered.push_back({"", SGroup{}});
    }
    for (size_t i = 0; i < ordered.size(); ++i)
        groupIndex[ordered[i].first] = i;
    MetricCell implied;
    for (const auto& [k, cell] : s.cells) {
        if (steps && !steps->count(k.step))
            continue;
        if (key.empty() ? !k.key.empty() : (k.key != key || (!values.empty() && !values.count(k.value))))
            continue;
        if (pos ? !pos->count(k.pos) : (groupBy == "derived.pos_bucket" ? k.pos < 0 : k.pos >= 0))
            continue;
        std::string sortKey;
        if (groupBy == kStepKey) {
            if (k.step < 0)
                continue;
            char buf[32];
            std::snprintf(buf, sizeof buf, "%020lld", (long long)k.step);
            sortKey = buf;
        } else if (groupBy == "derived.pos_bucket") {
            sortKey = std::to_string(k.pos);
        } else if (!groupBy.empty()) {
            const DerivedKeyInfo* info = findDerivedKey(groupBy);
            sortKey = k.value;
            if (info) {
                auto it = std::find(info->values.begin(), info->values.end(), k.value);
                char buf[16];
                std::snprintf(buf, sizeof buf, "%06d", int(it - info->values.begin()));
                sortKey = buf;
            }
        }
        auto gi = groupIndex.find(sortKey);
        if (gi == groupIndex.end())
            continue;
        if (const MetricCell* m = s.metric(cell, c.metric, implied))
            ordered[gi->second].second.cell.merge(*m);
    }
    for (auto& [sk, g] : ordered)
        out.groups.push_back(std::move(g));
    return out;
}

// The sketch's quantile and the interval the exact one lies in (SPEC 10's resolution).
struct Estimate {
    double value = 0, lo = 0, hi = 0;
};
std::optional<Estimate> quantileEstimate(const MetricCell& c, double q) {
    const auto v = sketchQuantile(c, q);
    if (!v)
        return std::nullopt;
    const uint64_t n = c.count;
    const double h = double(n - 1) * q;
    const uint64_t r = std::min<uint64_t>(uint64_t(std::floor(h)), n - 1);
    // Ranks 0 and n − 1 are exact (min, max); any other rank is within α of its value.
    auto width = [&](uint64_t rank) {
        if (rank == 0 || rank >= n - 1)
            return 0.0;
        const double e = std::clamp(c.sketch.valueAtRank(rank), c.min, c.max);
        return kRelativeAccuracy / (1 - kRelativeAccuracy) * std::fabs(e);
    };
    const double d = std::max(width(r), r + 1 < n ? width(r + 1) : 0.0);
    return Estimate{*v, std::max(c.min, *v - d), std::min(c.max, *v + d)};
}

// Status of a value against the clause's bounds (no side effects).
Status statusOf(const Clause& c, double v) {
    if (c.max && v > c.max->value)
        return Status::Fail;
    if (c.min && v < c.min->value)
        return Status::Fail;
    return Status::Pass;
}

// Decides r from an observed estimate and the interval [lo, hi] its exact value lies in.
void decideInterval(const Clause& c, Result& r, double observed, double lo, double hi, const std::string& what) {
    r.observed = observed;
    detail::decideAgainst(c, r, "no values in scope");
    const Status a = statusOf(c, lo), b = statusOf(c, hi);
    // A bound inside [lo, hi] makes the status unknown (both ends pass does not mean the
    // inside does when min < lo and hi < max only partly: check the bounds themselves).
    bool straddles = a != b;
    if (c.max && c.max->value >= lo && c.max->value < hi)
        straddles = true;
    if (c.min && c.min->value > lo && c.min->value <= hi)
        straddles = true;
    if (straddles) {
        r.status = Status::Inconclusive;
        r.message = what + " is in [" + fmt(lo) + ", " + fmt(hi) +
                    "] on this summary (its sketch resolves values to 1 %), which straddles the threshold; "
                    "the run itself decides";
    } else {
        r.status = a;
        r.message += " (from the summary: the exact value lies in [" + fmt(lo) + ", " + fmt(hi) + "])";
    }
}

std::vector<Result> numerical(const Clause& c, const SScope& sc) {
    std::vector<Result> out;
    const Aggregate& ag = *c.aggregate;
    for (const SGroup& g : sc.groups) {
        Result r = base(c, g.slice);
        r.aggregate = ag.text;
        const MetricCell& m = g.cell;
        r.n = m.count;
        if (m.count == 0) {
            detail::decideAgainst(c, r, "no values in scope");
            out.push_back(std::move(r));
            continue;
        }
        switch (ag.kind) {
        case Aggregate::Kind::Max: r.observed = m.max; break;
        case Aggregate::Kind::Min: r.observed = m.min; break;
        case Aggregate::Kind::Mean: r.observed = m.mean(); break;
        case Aggregate::Kind::Sum: r.observed = m.sum.value(); break;
        case Aggregate::Kind::Count: r.observed = double(m.count); break;
        case Aggregate::Kind::Quantile: {
            const auto e = *quantileEstimate(m, ag.q);
            decideInterval(c, r, e.value, e.lo, e.hi, ag.text);
            out.push_back(std::move(r));
            continue;
        }
        case Aggregate::Kind::FractionAbove:
        case Aggregate::Kind::FractionOutside: {
            uint64_t sure, maybe;
            if (ag.kind == Aggregate::Kind::FractionAbove) {
                std::tie(sure, maybe) = m.sketch.countAbove(ag.a);
            } else {
                auto [s1, m1] = m.sketch.countBelow(ag.a);
                auto [s2, m2] = m.sketch.countAbove(ag.b);
                sure = s1 + s2;
                maybe = m1 + m2;
            }
            const double n = double(m.count);
            decideInterval(c, r, (double(sure) + 0.5 * double(maybe)) / n, double(sure) / n,
                           double(sure + maybe) / n, ag.text);
            out.push_back(std::move(r));
            continue;
        }
        }
        detail::decideAgainst(c, r, "no values in scope");
        out.push_back(std::move(r));
    }
    return out;
}

std::string tooFew(uint64_t n, int64_t minSamples) {
    return n == 0 ? "no values in scope"
                  : std::to_string(n) + " samples, fewer than min_samples " + std::to_string(minSamples);
}

std::vector<Result> statistical(const Clause& c, const SScope& sc) {
    std::vector<Result> out;
    const bool seqUnit = c.unit == Clause::Unit::Sequence;
    const uint64_t minN = uint64_t(std::max<int64_t>(c.minSamples, 1));
    size_t m = 0;
    for (const SGroup& g : sc.groups) {
        const uint64_t units = c.test == Clause::Test::Mean ? (g.cell.sequences ? g.cell.count : 0)
                                                            : (seqUnit ? g.cell.sequences : g.cell.count);
        if (units >= minN)
            ++m;
    }
    double conf = c.confidence.value;
    if (c.correction == Clause::Correction::Bonferroni && m > 1)
        conf = 1 - (1 - conf) / double(m);
    for (const SGroup& g : sc.groups) {
        Result r = base(c, g.slice);
        r.confidence = conf;
        const MetricCell& cell = g.cell;
        if (c.test == Clause::Test::Exceedance) {
            r.aggregate = "exceedance";
            r.n = seqUnit ? cell.sequences : cell.count;
            if (r.n < minN) {
                r.status = Status::Inconclusive;
                r.message = tooFew(r.n, c.minSamples);
                out.push_back(std::move(r));
                continue;
            }
            const double level = c.level->value;
            auto [sure, maybe] = (seqUnit ? cell.seqMax : cell.sketch).countAbove(level);
            if (level >= cell.max) {   // exact ends: nothing lies above the maximum
                sure = 0;
                maybe = 0;
            }
            const double uLo = wilsonUpper(sure, r.n, conf), uHi = wilsonUpper(sure + maybe, r.n, conf);
            r.max = c.max ? std::optional(c.max->value) : std::nullopt;
            r.observed = (double(sure) + 0.5 * double(maybe)) / double(r.n);
            r.upper = maybe ? 0.5 * (uLo + uHi) : uLo;
            r.margin = *r.max - *r.upper;
            const std::string unit = seqUnit ? " sequences" : " values";
            if (uHi <= *r.max || uLo > *r.max) {
                r.status = uHi <= *r.max ? Status::Pass : Status::Fail;
                r.upper = r.status == Status::Pass ? uHi : uLo;
                r.margin = *r.max - *r.upper;
                r.message = (maybe ? std::to_string(sure) + " to " + std::to_string(sure + maybe)
                                   : std::to_string(sure)) +
                            " of " + std::to_string(r.n) + unit + " above " + fmt(level) + "; upper bound " +
                            fmt(*r.upper) + (r.status == Status::Pass ? " <= " : " > ") + fmt(*r.max) +
                            " at confidence " + fmt(conf) + (maybe ? " (from the summary's sketch)" : "");
            } else {
                r.status = Status::Inconclusive;
                r.message = std::to_string(sure) + " to " + std::to_string(sure + maybe) + " of " + std::to_string(r.n) +
                            unit + " above " + fmt(level) + " on this summary (the sketch's bucket around the level "
                            "holds " + std::to_string(maybe) + "); upper bound in [" + fmt(uLo) + ", " + fmt(uHi) +
                            "], which straddles " + fmt(*r.max) + "; the run itself decides";
            }
        } else {
            r.aggregate = "mean";
            r.n = cell.count;
            if (r.n < minN || cell.sequences == 0) {
                r.status = Status::Inconclusive;
                r.message = tooFew(r.n, c.minSamples);
                out.push_back(std::move(r));
                continue;
            }
            // The ratio mean ΣS/Σn and its normal interval over sequences (summary_views.h).
            const double mu = cell.mean();
            const double seOr = meanStandardError(cell);
            const double se = std::isfinite(seOr) ? seOr : 0;
            const double z = normalQuantile(1 - (1 - conf) / 2);
            r.observed = double(mu);
            r.ci = std::pair{double(mu) - z * se, double(mu) + z * se};
            if (c.min)
                r.min = c.min->value;
            if (c.max)
                r.max = c.max->value;
            auto marginAt = [&](double f) {
                double margin = INFINITY;
                if (r.max)
                    margin = std::min(margin, *r.max - (double(mu) + f * z * se));
                if (r.min)
                    margin = std::min(margin, (double(mu) - f * z * se) - *r.min);
                return margin;
            };
            const double wide = marginAt(kSummaryMeanMargin), narrow = marginAt(1 / kSummaryMeanMargin);
            r.margin = marginAt(1);
            const std::string what = "mean " + fmt(*r.observed) + ", " + fmt(100 * conf) + "% normal interval [" +
                                     fmt(r.ci->first) + ", " + fmt(r.ci->second) + "] over " +
                                     std::to_string(cell.sequences) + " sequences (from the summary)";
            if (wide >= 0) {
                r.status = Status::Pass;
                r.message = what;
            } else if (narrow < 0 || cell.sequences < 2) {
                r.status = cell.sequences < 2 && narrow >= 0 ? Status::Inconclusive : Status::Fail;
                r.message = what;
            } else {
                r.status = Status::Inconclusive;
                r.message = what + ": within the summary's margin (x" + fmt(kSummaryMeanMargin) +
                            ") of a bound, where the run's bootstrap decides";
            }
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace

Evaluation evaluateContractOnSummary(const Contract& contract, const RunSummary& summary,
                                     const EvaluateOptions& options) {
    Evaluation ev;
    ev.stage = evaluationStage(contract, options);
    const std::optional<CellData> all = summary.total();
    for (const Clause& c : contract.clauses) {
        const bool metricClause = c.family == Family::Numerical || c.family == Family::Statistical ||
                                  (c.family == Family::Observability && c.requireFields.empty());
        if (!metricClause) {
            Result r = base(c, std::nullopt);
            r.metric = c.family == Family::Runtime ? c.field : c.requireFields.empty() ? "" : c.requireFields.front();
            r.aggregate = c.family == Family::Observability ? "coverage" : c.aggregate ? c.aggregate->text : "";
            r.status = Status::Inconclusive;
            r.message = c.family == Family::Runtime
                            ? "a summary keeps no header or runtime values; runtime clauses need the run"
                            : "a summary keeps no per-field coverage; require_fields needs the run";
            ev.results.push_back(std::move(r));
            continue;
        }
        const MetricInfo* info = findMetric(c.metric);
        if (!info) {
            Result r = base(c, std::nullopt);
            r.status = Status::Error;
            r.message = "unknown metric '" + c.metric + "'";
            ev.results.push_back(std::move(r));
            continue;
        }
        SScope sc;
        if (info->level == MetricLevel::Run) {
            if (!c.where.empty() || !c.perSlice.empty() || c.positions) {
                sc.error = "'" + c.metric + "' is a per-run metric: where, per_slice and positions do not apply";
            } else {
                const RunSums rs = all ? all->run : RunSums{};
                const double v = c.metric == "ess" ? essOf(rs) : c.metric == "prob_pearson" ? probPearsonOf(rs)
                                                                                            : logPplDiffOf(rs);
                SGroup g;
                g.cell.missing = rs.missing;
                g.cell.nonfinite = c.metric == "ess" ? rs.nonfinite : rs.nonfinite - (rs.pairs - rs.ratios);
                if (std::isfinite(v)) {
                    g.cell.add(v);
                    g.cell.sequences = 1;
                    g.cell.seqSumSq.add(v * v);
                    g.cell.seqCountSq.add(1);
                    g.cell.seqSumCount.add(v);
                    g.cell.seqMax.add(v);
                }
                sc.groups.push_back(std::move(g));
            }
        } else {
            sc = scopeOf(c, summary, info->level);
        }
        if (!sc.error.empty() || !sc.unresolved.empty()) {
            Result r = base(c, std::nullopt);
            r.aggregate = c.family == Family::Statistical ? (c.test == Clause::Test::Mean ? "mean" : "exceedance")
                          : c.family == Family::Observability ? "nonfinite_fraction"
                          : c.aggregate                      ? c.aggregate->text
                                                             : "";
            r.status = sc.error.empty() ? Status::Inconclusive : Status::Error;
            r.message = sc.error.empty() ? sc.unresolved : sc.error;
            ev.results.push_back(std::move(r));
            continue;
        }
        std::vector<Result> rs;
        if (c.family == Family::Numerical) {
            rs = numerical(c, sc);
        } else if (c.family == Family::Statistical) {
            rs = statistical(c, sc);
        } else {   // observability: max_nonfinite_fraction, exact from the counts
            for (const SGroup& g : sc.groups) {
                Result r = base(c, g.slice);
                r.aggregate = "nonfinite_fraction";
                const uint64_t total = g.cell.count + g.cell.missing + g.cell.nonfinite;
                r.n = total;
                if (total == 0) {
                    r.status = Status::Inconclusive;
                    r.message = "no positions in scope";
                } else {
                    r.observed = double(g.cell.nonfinite) / double(total);
                    r.max = c.maxNonfiniteFraction ? c.maxNonfiniteFraction->value : 0.0;
                    r.margin = *r.max - *r.observed;
                    r.status = *r.margin >= 0 ? Status::Pass : Status::Fail;
                    r.message = std::to_string(g.cell.nonfinite) + " of " + std::to_string(total) +
                                " positions non-finite (" + std::to_string(g.cell.missing) + " missing)";
                }
                rs.push_back(std::move(r));
            }
        }
        for (Result& r : rs)
            ev.results.push_back(std::move(r));
    }
    finishEvaluation(contract, ev);
    return ev;
}

Evaluation evaluateContractOn(const Contract& contract, const EvaluationData& data, const EvaluateOptions& options,
                              const Progress& progress) {
    if (data.summary)
        return evaluateContractOnSummary(contract, *data.summary, options);
    return evaluateContract(contract, data.run, options, progress);
}

EvaluationData loadEvaluationData(const std::string& path, const Progress& progress) {
    if (looksLikeSummary(path))
        return std::make_shared<const RunSummary>(readSummary(path));
    return std::make_shared<const Run>(loadRun(path, progress));
}

}  // namespace kcx
