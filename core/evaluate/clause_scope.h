// The tokens a clause looks at: its `where` (labeled and derived keys) and `positions`,
// as one byte per token of the run. The window's heatmap and charts use it to show a
// clause's own statistic over the clause's own scope (what the evaluator decides on).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
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

// A clause's scope, built once by whichever thread asks first. The window hands these to
// its chart jobs, so that a mask (a byte per token: 35 ms for 10M tokens on this project's
// machines, most of it first touches of fresh pages) is built off the GUI thread, once for
// the histogram and the position chart together (issue 17).
class LazyClauseScope {
public:
    LazyClauseScope(Clause c, std::shared_ptr<MetricEngine> engine, std::optional<SliceLabels> slice);
    // Builds the scope the first time (blocking other callers until it is built). It does
    // not keep the engine (and its run and arrays) alive: once the engine is gone, it is
    // the scope of nothing (every token; whoever asks is about to be given another run).
    const ClauseScope& get() const;
    // Every token, known without building: no `where`, no `positions`, no slice labels.
    bool all() const { return all_; }

private:
    Clause clause_;
    std::weak_ptr<MetricEngine> engine_;
    std::optional<SliceLabels> slice_;
    bool all_ = false;
    mutable std::once_flag once_;
    mutable ClauseScope scope_;
};

namespace detail {
// Which sequences a `where` keeps (labeled keys only); fills `error` when a key is not in
// the run.
std::vector<char> sequencesInScope(const Run& run, const SliceFilter& where, std::string& error);
}  // namespace detail

}  // namespace kcx
