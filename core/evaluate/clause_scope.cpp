#include "core/evaluate/clause_scope.h"

#include <algorithm>
#include <stdexcept>

#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics.h"

namespace kcx {

namespace detail {

std::vector<char> sequencesInScope(const Run& run, const SliceFilter& where, std::string& error) {
    std::vector<char> keep(run.sequenceCount(), 1);
    for (const auto& [key, accepted] : where.anyOf) {
        const int k = run.slices.keyIndex(key);
        if (k < 0) {
            error = "the run has no slice key '" + key + "'";
            return {};
        }
        for (size_t s = 0; s < keep.size(); ++s) {
            const std::string* label = run.slices.label(s, size_t(k));
            if (!label || std::find(accepted.begin(), accepted.end(), *label) == accepted.end())
                keep[s] = 0;
        }
    }
    return keep;
}

}  // namespace detail

std::string clauseScopeKey(const Clause& c, const SliceLabels* slice) {
    std::string k;
    for (const auto& [key, values] : c.where.anyOf) {
        k += key + '\x1f';
        for (const auto& v : values)
            k += v + '\x1e';
        k += '\x1d';
    }
    k += '\x1c';
    if (c.positions)
        k += std::to_string(c.positions->first) + ':' + std::to_string(c.positions->second);
    k += '\x1c';
    if (slice)
        for (const auto& [key, value] : *slice)
            k += key + '\x1f' + value + '\x1d';
    return k;
}

ClauseScope clauseTokenScope(const Clause& clause, MetricEngine& engine, const SliceLabels* slice) {
    ClauseScope out;
    if (slice && !slice->empty()) {
        // A slice's labels narrow the `where`: key = value, within what `where` accepts.
        Clause c = clause;
        for (const auto& [key, value] : *slice) {
            auto it = c.where.anyOf.find(key);
            if (it == c.where.anyOf.end())
                c.where.anyOf[key] = {value};
            else if (std::find(it->second.begin(), it->second.end(), value) != it->second.end())
                it->second = {value};
            else
                it->second.clear();   // outside the clause's own scope: nothing
        }
        return clauseTokenScope(c, engine);
    }
    const Clause& c = clause;
    if (c.where.empty() && !c.positions)
        return out;
    const Run& run = engine.run();
    SliceFilter labeled;
    struct DerivedFilter {
        std::shared_ptr<const DerivedCodes> codes;
        std::vector<char> accept;   // per code
    };
    std::vector<DerivedFilter> derivedFilters;
    for (const auto& [key, accepted] : c.where.anyOf) {
        if (!isDerivedKey(key)) {
            labeled.anyOf[key] = accepted;
            continue;
        }
        DerivedFilter f;
        try {
            f.codes = engine.derived().get(key);
        } catch (const std::invalid_argument& e) {
            out.error = e.what();
            return out;
        }
        f.accept.assign(f.codes->values.size(), 0);
        for (size_t v = 0; v < f.codes->values.size(); ++v)
            f.accept[v] = std::find(accepted.begin(), accepted.end(), f.codes->values[v]) != accepted.end();
        derivedFilters.push_back(std::move(f));
    }
    const std::vector<char> keep = detail::sequencesInScope(run, labeled, out.error);
    if (!out.error.empty())
        return out;
    auto mask = std::make_shared<std::vector<uint8_t>>(run.tokenCount(), 0);
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        if (!keep[s])
            continue;
        const size_t begin = run.seqBegin(s), len = run.seqLength(s);
        size_t lo = 0, hi = len;
        if (c.positions) {   // [from, to), clamped to the sequence, as the evaluator does
            lo = size_t(std::clamp<int64_t>(c.positions->first, 0, int64_t(len)));
            hi = std::max(lo, size_t(std::clamp<int64_t>(c.positions->second, 0, int64_t(len))));
        }
        for (size_t t = lo; t < hi; ++t) {
            bool in = true;
            for (const DerivedFilter& f : derivedFilters) {
                const int code = f.codes->code(s, begin + t);
                in = in && code >= 0 && f.accept[size_t(code)];
            }
            (*mask)[begin + t] = in;
            out.count += in;
        }
    }
    out.tokens = std::move(mask);
    return out;
}

LazyClauseScope::LazyClauseScope(Clause c, std::shared_ptr<MetricEngine> engine, std::optional<SliceLabels> slice)
    : clause_(std::move(c)), engine_(std::move(engine)), slice_(std::move(slice)) {
    all_ = clause_.where.empty() && !clause_.positions && (!slice_ || slice_->empty());
}

const ClauseScope& LazyClauseScope::get() const {
    std::call_once(once_, [this] {
        if (const auto engine = engine_.lock(); !all_ && engine)
            scope_ = clauseTokenScope(clause_, *engine, slice_ ? &*slice_ : nullptr);
    });
    return scope_;
}

}  // namespace kcx
