// Deciding each clause family (SPEC 4.1, 4.2) from cached, scoped values.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/base/parallel.h"
#include "core/base/prefault.h"
#include "core/evaluate/clause_scope.h"
#include "core/evaluate/evaluator_internal.h"
#include "core/evaluate/stats.h"
#include "core/metrics/derived_slices.h"

namespace kcx::detail {
namespace {

// Why a statistical result is inconclusive for want of values.
std::string tooFewMessage(size_t n, int64_t minSamples) {
    return n == 0 ? "no values in scope"
                  : std::to_string(n) + " samples, fewer than min_samples " + std::to_string(minSamples);
}

// The range of value indices sequence s contributes: its tokens within the clause's
// `positions` (clamped to the sequence) for a per-token metric, or [s, s+1) per sequence.
std::pair<size_t, size_t> valueRange(const Run& run, const Clause& c, size_t s, bool token) {
    if (!token)
        return {s, s + 1};
    const size_t b = run.seqBegin(s), len = run.seqLength(s);
    size_t lo = 0, hi = len;
    if (c.positions) {
        lo = size_t(std::clamp<int64_t>(c.positions->first, 0, int64_t(len)));
        hi = size_t(std::clamp<int64_t>(c.positions->second, 0, int64_t(len)));
    }
    return {b + lo, b + std::max(lo, hi)};
}

// Group index of each sequence under per_slice (-1 = not in any group).
std::vector<int> groupOf(const Run& run, const Clause& c, std::vector<Group>& groups, std::string& error) {
    std::vector<int> g(run.sequenceCount(), 0);
    if (c.perSlice.empty()) {
        groups.resize(1);
        return g;
    }
    const int k = run.slices.keyIndex(c.perSlice);
    if (k < 0) {
        error = "the run has no slice key '" + c.perSlice + "' (per_slice)";
        return {};
    }
    const auto& values = run.slices.values[size_t(k)];
    groups.resize(values.size());
    for (size_t v = 0; v < values.size(); ++v)
        groups[v].slice = SliceLabels{{c.perSlice, values[v]}};
    for (size_t s = 0; s < g.size(); ++s)
        g[s] = run.slices.codes[s * run.slices.keys.size() + size_t(k)];
    return g;
}

bool usesDerivedKeys(const Clause& c) {
    if (isDerivedKey(c.perSlice))
        return true;
    for (const auto& [key, accepted] : c.where.anyOf)
        if (isDerivedKey(key))
            return true;
    return false;
}

// A clause whose `where` or `per_slice` names a derived key (docs/slices.md). Labeled keys
// are handled as in buildMetricState; derived keys may be per token, so whether a token is
// in scope, and its group, are decided token by token. Clauses without derived keys never
// come here, so their results are unchanged.
void buildDerivedState(const Clause& c, MetricEngine& engine, const MetricValues& values, ClauseState& st) {
    const Run& run = engine.run();
    const bool token = values.level == MetricLevel::Token;
    DerivedSlices& derived = engine.derived();
    auto codesOf = [&](const std::string& key) -> std::shared_ptr<const DerivedCodes> {
        try {
            auto codes = derived.get(key);
            if (codes->level == DerivedLevel::Token && !token) {
                st.error = "'" + key + "' is per token; '" + c.metric + "' is per sequence";
                return nullptr;
            }
            return codes;
        } catch (const std::invalid_argument& e) {
            st.error = e.what();
            return nullptr;
        }
    };
    struct Filter {
        std::shared_ptr<const DerivedCodes> codes;
        std::vector<char> accept;   // per code
    };
    SliceFilter labeled;
    std::vector<Filter> tokenFilters;
    std::vector<char> seqKeep(run.sequenceCount(), 1);
    std::vector<Filter> seqFilters;
    for (const auto& [key, accepted] : c.where.anyOf) {
        if (!isDerivedKey(key)) {
            labeled.anyOf[key] = accepted;
            continue;
        }
        Filter f{codesOf(key), {}};
        if (!f.codes)
            return;
        f.accept.assign(f.codes->values.size(), 0);
        for (size_t v = 0; v < f.codes->values.size(); ++v)
            f.accept[v] = std::find(accepted.begin(), accepted.end(), f.codes->values[v]) != accepted.end();
        (f.codes->level == DerivedLevel::Token ? tokenFilters : seqFilters).push_back(std::move(f));
    }
    const auto keep = sequencesInScope(run, labeled, st.error);
    if (!st.error.empty())
        return;
    for (size_t s = 0; s < seqKeep.size(); ++s) {
        seqKeep[s] = keep[s];
        for (const Filter& f : seqFilters) {
            const int code = f.codes->sequence[s];
            seqKeep[s] = seqKeep[s] && code >= 0 && f.accept[size_t(code)];
        }
    }
    std::vector<int> seqGroup, groupOfCode;   // groupOfCode: derived per_slice code -> group
    std::shared_ptr<const DerivedCodes> tokenGroup;
    if (!isDerivedKey(c.perSlice)) {
        seqGroup = groupOf(run, c, st.groups, st.error);
        if (!st.error.empty())
            return;
    } else {
        const auto codes = codesOf(c.perSlice);
        if (!codes)
            return;
        // Like a labeled key, whose values are the ones the run has: one group per value that
        // occurs in the run (a run of short sequences has no pos_4096_inf group).
        std::vector<char> present(codes->values.size(), 0);
        if (codes->level == DerivedLevel::Sequence)
            for (int32_t x : codes->sequence)
                if (x >= 0)
                    present[size_t(x)] = 1;
        for (int8_t x : codes->token)
            if (x >= 0)
                present[size_t(x)] = 1;
        for (size_t v = 0; v < codes->values.size(); ++v) {
            groupOfCode.push_back(present[v] ? int(st.groups.size()) : -1);
            if (present[v]) {
                st.groups.emplace_back();
                st.groups.back().slice = SliceLabels{{c.perSlice, codes->values[v]}};
            }
        }
        if (codes->level == DerivedLevel::Sequence)
            for (int32_t x : codes->sequence)
                seqGroup.push_back(x < 0 ? -1 : groupOfCode[size_t(x)]);
        else {
            seqGroup.assign(run.sequenceCount(), 0);
            tokenGroup = codes;
        }
    }
    const bool perSeq = c.family == Family::Statistical;
    const size_t G = st.groups.size();
    std::vector<double> sum(G, 0), mx(G, -INFINITY);
    std::vector<uint64_t> cnt(G, 0);
    std::vector<size_t> touched;
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        if (!seqKeep[s] || seqGroup[s] < 0)
            continue;
        const auto [from, to] = valueRange(run, c, s, token);
        touched.clear();
        for (size_t i = from; i < to; ++i) {
            bool in = true;
            for (const Filter& f : tokenFilters) {
                const int code = f.codes->token[i];
                in = in && code >= 0 && f.accept[size_t(code)];
            }
            const int code = tokenGroup ? tokenGroup->token[i] : 0;
            const int gi = !tokenGroup ? seqGroup[s] : code < 0 ? -1 : groupOfCode[size_t(code)];
            if (!in || gi < 0)
                continue;
            Group& g = st.groups[size_t(gi)];
            const double v = values.values[i];
            if (std::isnan(v)) {
                (isMissing(v) ? g.missing : g.nonfinite)++;
                continue;
            }
            g.values.push_back(v);
            if (!cnt[size_t(gi)]++)
                touched.push_back(size_t(gi));
            sum[size_t(gi)] += v;
            mx[size_t(gi)] = std::max(mx[size_t(gi)], v);
        }
        for (size_t gi : touched) {
            if (perSeq) {
                st.groups[gi].seqSum.push_back(sum[gi]);
                st.groups[gi].seqCount.push_back(double(cnt[gi]));
                st.groups[gi].seqMax.push_back(mx[gi]);
            }
            sum[gi] = 0;
            mx[gi] = -INFINITY;
            cnt[gi] = 0;
        }
    }
}

}  // namespace

void buildMetricState(const Clause& c, MetricEngine& engine, ClauseState& st, bool prepareDrags, bool countFirst) {
    const Run& run = engine.run();
    st = ClauseState{};
    auto values = engine.get(c.metric);
    const bool token = values->level == MetricLevel::Token;
    if (values->level == MetricLevel::Run) {
        if (!c.where.empty() || !c.perSlice.empty() || c.positions) {
            st.error = "'" + c.metric + "' is a per-run metric: where, per_slice and positions do not apply";
            return;
        }
        st.groups.resize(1);
        Group& g = st.groups[0];
        const double v = values->values[0];
        if (!std::isnan(v))
            g.values.push_back(v);
        g.missing = values->missing;
        g.nonfinite = values->nonfinite;
        return;
    }
    if (c.positions && !token) {
        st.error = "positions apply to per-token metrics; '" + c.metric + "' is per sequence";
        return;
    }
    if (usesDerivedKeys(c)) {
        buildDerivedState(c, engine, *values, st);
        if (!st.error.empty())
            st.groups.clear();
        return;
    }
    const auto keep = sequencesInScope(run, c.where, st.error);
    if (!st.error.empty())
        return;
    const auto group = groupOf(run, c, st.groups, st.error);
    if (!st.error.empty())
        return;
    const bool perSeq = c.family == Family::Statistical;
    // Counted, not copied (countFirst): an exceedance test on tokens at its own level needs
    // each group's count of values and of values above the level, nothing more.
    const bool countOnly = prepareDrags && countFirst && c.family == Family::Statistical &&
                           c.test == Clause::Test::Exceedance && c.unit == Clause::Unit::Token && c.level && token;
    const double level = countOnly ? c.level->value : 0;
    std::vector<uint64_t> counted(countOnly ? st.groups.size() : 0), above(counted.size());
    // One shot with one group (kcx check's usual clause): the group's values are the
    // metric's array with the gaps closed, in order, so the engine's array is taken and
    // compacted in place rather than copied (8 bytes a token less at the peak). The next
    // clause on the same metric has it computed again, which costs less than the copy.
    std::optional<MetricValues> owned;
    if (!prepareDrags && st.groups.size() == 1) {
        values.reset();
        owned = engine.take(c.metric);
        if (!owned)
            values = engine.get(c.metric);
    }
    const std::vector<double>& source = owned ? owned->values : values->values;
    if (!owned && !countOnly) {
        // Each group's room at once (an upper bound: gaps are skipped), not by doubling: the
        // growth copied every group's values again and mapped fresh pages each time.
        std::vector<size_t> room(st.groups.size(), 0);
        for (size_t s = 0; s < run.sequenceCount(); ++s)
            if (keep[s] && group[s] >= 0) {
                const auto [from, to] = valueRange(run, c, s, token);
                room[size_t(group[s])] += to - from;
            }
        for (size_t g = 0; g < st.groups.size(); ++g)
            reservePrefaulted(st.groups[g].values, room[g]);
    }
    size_t kept = 0;
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        if (!keep[s] || group[s] < 0)
            continue;
        Group& g = st.groups[size_t(group[s])];
        const auto [from, to] = valueRange(run, c, s, token);
        double sum = 0, mx = -INFINITY;
        uint64_t cnt = 0, over = 0;
        for (size_t i = from; i < to; ++i) {
            const double v = source[i];
            if (std::isnan(v)) {
                (isMissing(v) ? g.missing : g.nonfinite)++;
                continue;
            }
            if (countOnly)
                over += v > level;
            else if (owned)
                owned->values[kept++] = v;   // kept <= i: nothing unread is overwritten
            else
                g.values.push_back(v);
            sum += v;
            mx = std::max(mx, v);
            ++cnt;
        }
        if (perSeq && cnt) {
            g.seqSum.push_back(sum);
            g.seqCount.push_back(double(cnt));
            g.seqMax.push_back(mx);
        }
        if (countOnly) {
            counted[size_t(group[s])] += cnt;
            above[size_t(group[s])] += over;
        }
    }
    if (countOnly) {
        for (size_t gi = 0; gi < st.groups.size(); ++gi) {
            Group& g = st.groups[gi];
            g.countedN = counted[gi];
            g.k = above[gi];
            g.kLevel = level;
            g.kUnit = false;
        }
        st.counted = true;
        st.countedLevel = level;
    }
    if (owned) {
        owned->values.resize(kept);
        st.groups[0].values = std::move(owned->values);
    }
}

// k of n above `level`: by binary search once the per-sequence maxima have been sorted
// for a drag, from bucket sizes once the token values have been bucketed for one, else by
// a pass.
static uint64_t countAbove(const Group& g, bool seqUnit, double level) {
    const std::vector<double>& v = seqUnit ? g.seqMax : g.values;
    if (seqUnit && g.sorted[1])
        return uint64_t(v.end() - std::upper_bound(v.begin(), v.end(), level));
    if (!seqUnit && g.buckets.built())
        return g.buckets.countAbove(v, level);
    return uint64_t(std::count_if(v.begin(), v.end(), [&](double x) { return x > level; }));
}

std::vector<Result> decideStatistical(const Clause& c, ClauseState& st) {
    std::vector<Result> out;
    const bool seqUnit = c.unit == Clause::Unit::Sequence;
    const uint64_t minN = uint64_t(std::max<int64_t>(c.minSamples, 1));
    // m for Bonferroni: the slices with enough values to be tested.
    size_t m = 0;
    // (The units counted are the ones the decision below compares with min_samples.)
    for (const Group& g : st.groups) {
        const size_t tokens = g.countedN ? size_t(*g.countedN) : g.values.size();
        const size_t units = c.test == Clause::Test::Mean ? (g.seqSum.empty() ? 0 : tokens)
                                                          : (seqUnit ? g.seqMax.size() : tokens);
        if (units >= minN)
            ++m;
    }
    double conf = c.confidence.value;
    if (c.correction == Clause::Correction::Bonferroni && m > 1)
        conf = 1 - (1 - conf) / double(m);
    for (Group& g : st.groups) {
        Result r = baseResult(c, g);
        r.confidence = conf;
        if (c.test == Clause::Test::Exceedance) {
            r.aggregate = "exceedance";
            const double level = c.level->value;
            std::vector<double>& v = seqUnit ? g.seqMax : g.values;
            r.n = !seqUnit && g.countedN ? *g.countedN : v.size();
            if (r.n < minN) {
                r.status = Status::Inconclusive;
                r.message = tooFewMessage(r.n, c.minSamples);
                out.push_back(std::move(r));
                continue;
            }
            if (!g.k || g.kLevel != level || g.kUnit != seqUnit) {
                // A second level is a drag: prepare once for the levels that follow. The
                // token values are bucketed (O(n), in place) rather than sorted, and only
                // then: the window's first evaluation no longer sorts 8 bytes a token it
                // may never drag (most of its time to settle at 10M tokens, issue 17).
                if (g.kLevel != level && g.k) {
                    if (seqUnit && !g.sorted[1]) {
                        std::sort(v.begin(), v.end());
                        g.sorted[1] = true;
                    } else if (!seqUnit && !g.buckets.built()) {
                        g.buckets.build(v);
                    }
                }
                g.k = countAbove(g, seqUnit, level);
                g.kLevel = level;
                g.kUnit = seqUnit;
            }
            r.observed = double(*g.k) / double(r.n);
            r.upper = wilsonUpper(*g.k, r.n, conf);
            r.max = c.max ? std::optional(c.max->value) : std::nullopt;
            r.margin = *r.max - *r.upper;
            r.status = *r.upper <= *r.max ? Status::Pass : Status::Fail;
            r.message = std::to_string(*g.k) + " of " + std::to_string(r.n) + (seqUnit ? " sequences" : " values") +
                        " above " + fmt(level) + "; upper bound " + fmt(*r.upper) + (r.status == Status::Pass ? " <= " : " > ") +
                        fmt(*r.max) + " at confidence " + fmt(conf);
        } else {
            r.aggregate = "mean";
            r.n = g.values.size();
            if (r.n < minN || g.seqSum.empty()) {
                r.status = Status::Inconclusive;
                r.message = tooFewMessage(r.n, c.minSamples);
                out.push_back(std::move(r));
                continue;
            }
            double s = 0, n = 0;
            for (size_t i = 0; i < g.seqSum.size(); ++i) {
                s += g.seqSum[i];
                n += g.seqCount[i];
            }
            r.observed = s / n;
            if (!g.ci || g.ciConf != conf || g.ciResamples != c.resamples || g.ciSeed != c.seed) {
                g.ci = bootstrapMeanInterval(g.seqSum, g.seqCount, conf, c.resamples, c.seed);
                g.ciConf = conf;
                g.ciResamples = c.resamples;
                g.ciSeed = c.seed;
            }
            r.ci = g.ci;
            if (c.min)
                r.min = c.min->value;
            if (c.max)
                r.max = c.max->value;
            double margin = INFINITY;
            if (r.max)
                margin = std::min(margin, *r.max - r.ci->second);
            if (r.min)
                margin = std::min(margin, r.ci->first - *r.min);
            r.margin = margin;
            r.status = margin >= 0 ? Status::Pass : Status::Fail;
            r.message = "mean " + fmt(*r.observed) + ", " + fmt(100 * conf) + "% interval [" + fmt(r.ci->first) +
                        ", " + fmt(r.ci->second) + "] over " + std::to_string(g.seqSum.size()) + " sequences";
        }
        out.push_back(std::move(r));
    }
    return out;
}

Result baseResult(const Clause& c, const Group& g) {
    Result r;
    r.clause = c.id;
    r.family = c.family;
    r.severity = c.severity;
    r.metric = c.metric;
    r.slice = g.slice;
    return r;
}

void decideAgainst(const Clause& c, Result& r, const char* noValue) {
    if (c.max)
        r.max = c.max->value;
    if (c.min)
        r.min = c.min->value;
    if (!r.observed) {
        r.status = Status::Inconclusive;
        r.message = noValue;
        return;
    }
    double margin = INFINITY;
    if (r.max)
        margin = std::min(margin, *r.max - *r.observed);
    if (r.min)
        margin = std::min(margin, *r.observed - *r.min);
    r.margin = margin;
    r.status = margin >= 0 ? Status::Pass : Status::Fail;
    std::string bound;
    if (r.max && *r.max - *r.observed == margin)
        bound = (r.status == Status::Pass ? " <= max " : " > max ") + fmt(*r.max);
    else if (r.min)
        bound = (r.status == Status::Pass ? " >= min " : " < min ") + fmt(*r.min);
    r.message = "observed " + fmt(*r.observed) + bound + " over " + std::to_string(r.n) + " values";
}

}  // namespace kcx::detail
