// The tokens a clause looks at: its `where` (labeled and derived keys) and `positions`,
// as one byte per token of the run. The window's heatmap and charts use it to show a
// clause's own statistic over the clause's own scope (what the evaluator decides on).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/evaluate/evaluator.h"
#include "core/formats/run.h"

namespace kcx {

class MetricEngine;

struct ClauseScope {
    // One byte per token of the run (non-zero: in scope); nullptr when every token is.
    std::shared_ptr<const std::vector<uint8_t>> tokens;
    uint64_t count = 0;      // tokens in scope
    std::string error;       // the scope cannot be built (unknown key, ...): tokens is null
    bool all() const { return !tokens && error.empty(); }
};

// The scope of clause c on the engine's run. Per-sequence metrics have no positions, but
// a `where` still keeps whole sequences; the mask is per token either way. With `slice`
// (a result's labels, e.g. {precision: fp8} of a per_slice clause), only that slice's
// tokens: each label narrows the scope as a one-value `where` would.
ClauseScope clauseTokenScope(const Clause& c, MetricEngine& engine, const SliceLabels* slice = nullptr);

// A key that is equal for two (clause, slice) pairs exactly when their scopes are: the
// clause's `where` and `positions` and the slice's labels.
std::string clauseScopeKey(const Clause& c, const SliceLabels* slice = nullptr);

namespace detail {
// Which sequences a `where` keeps (labeled keys only); fills `error` when a key is not in
// the run.
std::vector<char> sequencesInScope(const Run& run, const SliceFilter& where, std::string& error);
}  // namespace detail

}  // namespace kcx
