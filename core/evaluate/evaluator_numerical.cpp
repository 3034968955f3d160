// Deciding a numerical clause (SPEC 4.1), and what a reviewer sees beside a quantile: its
// distribution-free interval and how many values lie beyond the thresholds. Neither enters
// the decision (docs/contracts.md, "Numerical (N)").
#include <algorithm>

#include "core/base/parallel.h"
#include "core/evaluate/evaluator_internal.h"
#include "core/metrics/quantile_ci.h"

namespace kcx::detail {
namespace {

// The q of an aggregate that is a quantile: pNN, and max (q = 1) and min (q = 0).
std::optional<double> quantileOfAggregate(const Aggregate& a) {
    switch (a.kind) {
    case Aggregate::Kind::Quantile: return a.q;
    case Aggregate::Kind::Max: return 1.0;
    case Aggregate::Kind::Min: return 0.0;
    default: return std::nullopt;
    }
}

// A threshold that moved since the last decision is being dragged: the values of every
// group that counts again are bucketed once (BucketedValues), in parallel over the groups,
// so that this and every further level reads bucket sizes and scans one bucket instead of
// all the values.
void bucketForDrags(const Clause& c, ClauseState& st, int threads) {
    std::vector<Group*> todo;
    for (Group& g : st.groups) {
        const bool moved = (c.max && g.above && g.aboveAt != c.max->value) ||
                           (c.min && g.below && g.belowAt != c.min->value);
        if (moved && !g.buckets.built())
            todo.push_back(&g);
    }
    if (!todo.empty())
        parallelChunks(todo.size(), todo.size(), threads, [&](size_t, size_t b, size_t e) {
            for (size_t i = b; i < e; ++i)
                todo[i]->buckets.build(todo[i]->values);
        });
}

// The values above (or below) `level`, kept for the level last asked.
uint64_t valuesBeyondLevel(Group& g, bool above, double level) {
    std::optional<uint64_t>& cached = above ? g.above : g.below;
    double& at = above ? g.aboveAt : g.belowAt;
    if (cached && at == level)
        return *cached;
    if (g.buckets.built())
        cached = above ? g.buckets.countAbove(g.values, level) : g.buckets.countBelow(g.values, level);
    else if (above)
        cached = uint64_t(std::count_if(g.values.begin(), g.values.end(), [&](double x) { return x > level; }));
    else
        cached = uint64_t(std::count_if(g.values.begin(), g.values.end(), [&](double x) { return x < level; }));
    at = level;
    return *cached;
}

}  // namespace

std::vector<Result> decideNumerical(const Clause& c, ClauseState& st, int threads) {
    std::vector<Result> out;
    const std::optional<double> q = quantileOfAggregate(*c.aggregate);
    if (q)
        bucketForDrags(c, st, threads);
    for (Group& g : st.groups) {
        Result r = baseResult(c, g);
        r.aggregate = c.aggregate->text;
        r.n = g.values.size();
        if (!g.observed || g.observedFor != c.aggregate->text) {
            g.observed = applyAggregate(*c.aggregate, g.values, threads);
            g.observedFor = c.aggregate->text;
        }
        r.observed = g.observed;
        decideAgainst(c, r, "no values in scope");
        if (q && r.observed) {
            // The ranks depend only on n and q: computed once per group, not per threshold.
            if (!g.interval || g.intervalFor != c.aggregate->text) {
                g.interval = quantileInterval(g.values, *q, kQuantileIntervalConfidence, threads);
                g.intervalFor = c.aggregate->text;
            }
            r.ci = g.interval;
            r.confidence = kQuantileIntervalConfidence;
            // Each value once: with min above max (a moment of a drag) every value is beyond.
            uint64_t beyond = 0;
            if (c.max)
                beyond += valuesBeyondLevel(g, true, c.max->value);
            if (c.min)
                beyond += valuesBeyondLevel(g, false, c.min->value);
            r.beyond = c.min && c.max && c.min->value > c.max->value ? r.n : beyond;
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace kcx::detail
