// Internal to the evaluator: the cached per-clause groups and the family deciders.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluate/evaluator.h"
#include "core/metrics/quantile.h"

namespace kcx::detail {

// A number in a result's message: six significant digits.
inline std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// The values of one clause in one slice (the whole scope when there is no per_slice).
struct Group {
    std::optional<SliceLabels> slice;
    std::vector<double> values;                  // existing values in scope
    uint64_t missing = 0, nonfinite = 0;         // positions in scope without a value
    std::vector<double> seqSum, seqCount, seqMax;   // per sequence in scope (statistical)
    // caches, valid while the data do not change
    std::optional<double> observed;
    std::string observedFor;                     // the aggregate text `observed` is for
    std::optional<uint64_t> k;                   // exceedance count at kLevel
    double kLevel = 0;
    bool kUnit = false;
    bool sorted[2] = {false, false};             // [1]: seqMax sorted (after a level drag)
    std::optional<std::pair<double, double>> ci;
    double ciConf = 0;
    int64_t ciResamples = 0;
    uint64_t ciSeed = 0;
    // numerical pNN, max, min (evaluator_numerical.cpp): the quantile's interval, which
    // depends only on the values and q, and the counts beyond max / min at the last levels
    std::optional<std::pair<double, double>> interval;
    std::string intervalFor;                     // the aggregate text `interval` is for
    std::optional<uint64_t> above, below;        // values > aboveAt, values < belowAt
    double aboveAt = 0, belowAt = 0;
    BucketedValues buckets;                      // built on a second level (a drag)
    // A counted state (ClauseState::counted): how many values the group has, which are not
    // kept; `values` is empty and k holds the count above kLevel.
    std::optional<uint64_t> countedN;
};

}  // namespace kcx::detail

namespace kcx {
struct Evaluator::ClauseState {
    std::vector<detail::Group> groups;
    std::string error;                           // the clause cannot apply (status error)
    bool built = false;
    // Counted, not copied (an exceedance test on tokens, first evaluation in the window):
    // the groups hold their counts at `countedLevel` only. Another level rebuilds the state
    // with the values, ready for a drag.
    bool counted = false;
    double countedLevel = 0;
};
}  // namespace kcx

namespace kcx::detail {

using ClauseState = Evaluator::ClauseState;

// prepareDrags: the evaluator will be asked again (the window): the engine's arrays stay in
// its cache. Without it (one shot) a one-group clause takes the engine's array.
// countFirst (with prepareDrags): an exceedance test on tokens only counts, per group, the
// values and those above its level, without copying them: the window's first evaluation
// then maps no group arrays for it (80 MB at 10M tokens; fresh memory is most of the
// window's time to settle on this project's machines, issue 17).
void buildMetricState(const Clause& c, MetricEngine& engine, ClauseState& st, bool prepareDrags = true,
                      bool countFirst = false);
std::vector<Result> decideNumerical(const Clause& c, ClauseState& st, int threads);
std::vector<Result> decideStatistical(const Clause& c, ClauseState& st);
std::vector<Result> decideRuntime(const Clause& c, const Run& run);
std::vector<Result> decideObservability(const Clause& c, MetricEngine& engine, ClauseState& st);
Result baseResult(const Clause& c, const Group& g);
// Sets status, margin and message from r.observed against the clause's min/max.
void decideAgainst(const Clause& c, Result& r, const char* noValue);

}  // namespace kcx::detail
