// What the heatmap shows while a clause is selected: the clause's own statistic (its
// quantile, the share above its level, its mean, its max) over the clause's own scope
// (`where`, `positions`), marked where a cell breaks the clause's limit, with rows by the
// clause's slice key. Marks compare like with like: a cell is marked only when its value
// is the statistic the clause bounds.
#pragma once

#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/contract/contract.h"
#include "core/evaluate/clause_scope.h"
#include "ui/heatmap/heatmap_view.h"

namespace kcx {
class MetricEngine;
}

namespace kcx::ui {

class Session;

struct ClauseLens {
    QString clause;
    QString metric;
    // The clause's statistic. `has` is false when cells cannot show it (a sum, a count,
    // fraction_outside, a per-run metric): the user's plain statistic stays, unmarked.
    bool has = false;
    CellStatistic statistic;
    QString rowKey;   // per_slice, else the first `where` key; empty: rows stay
    QString note;     // why the clause has no cell statistic, or why its scope is unknown
};

// The lens of clause c. thresholdOf("max" | "min" | "level") gives the clause's current
// limits; scopeOf gives its scope (called only when cells can show the clause).
ClauseLens clauseLens(const Clause& c, const std::function<std::optional<double>(const std::string&)>& thresholdOf,
                      const std::function<ClauseScope()>& scopeOf);
// With the session's current thresholds (dragged values included) and its run's scope.
ClauseLens clauseLens(const Clause& c, Session& session);
// With the thresholds written in the clause (the report).
ClauseLens clauseLens(const Clause& c, MetricEngine& engine);

// "precision=fp8, positions 0–63": a clause's scope in words (empty: the whole run).
QString scopeText(const Clause& c);

}  // namespace kcx::ui
