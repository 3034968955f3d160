// Evaluating a contract against a run (SPEC 4.1, 4.2), and re-deciding it incrementally.
//
// An Evaluator holds the metric engine (metric arrays are computed once per run) and, per
// clause, the values in the clause's scope grouped by slice. Changing a threshold
// re-decides only that clause from the cached groups; changing a clause's metric, filter
// or positions rebuilds only that clause's groups.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/evaluate/bounds.h"
#include "core/metrics/metrics.h"

namespace kcx {

using SliceLabels = std::map<std::string, std::string>;

struct Result {
    std::string clause;
    Family family = Family::Numerical;
    Severity severity = Severity::Error;
    std::string metric;              // metric, runtime field, or observability subject
    std::string aggregate;           // aggregate text; "exceedance"/"mean" for statistical
    Status status = Status::Pass;
    std::optional<double> observed, min, max;
    std::optional<double> margin;    // distance to the nearest threshold; negative when failing
    uint64_t n = 0;                  // values (or units) behind the result
    std::optional<double> upper;     // exceedance: Wilson upper bound
    // Mean test: the bootstrap interval that is compared with min/max. Numerical pNN, max
    // and min: the distribution-free interval of the quantile (core/metrics/quantile_ci.h),
    // for the reviewer only, never compared; −∞ / +∞ for a side that n values cannot bound.
    std::optional<std::pair<double, double>> ci;
    std::optional<double> confidence;              // the confidence used (after correction)
    // Numerical pNN, max and min: how many values lie above `max` plus below `min`.
    std::optional<uint64_t> beyond;
    std::optional<SliceLabels> slice;              // per_slice value
    Action action = Action::Pass;    // at the evaluated stage
    std::string message;             // why, for people
};

struct Evaluation {
    std::vector<Result> results;
    Status verdict = Status::Pass;   // pass, fail or inconclusive
    std::string stage;
    Action action = Action::Pass;    // the run's action at `stage`
    std::map<std::string, Action> stageActions;   // every stage of the contract
    std::vector<BoundStep> bounds;
};

struct EvaluateOptions {
    std::string stage;               // empty = the contract's first stage
};

class Evaluator {
public:
    Evaluator(std::shared_ptr<MetricEngine> engine, Contract contract);
    ~Evaluator();

    const Contract& contract() const { return contract_; }
    MetricEngine& engine() { return *engine_; }
    // Evaluated once and dropped (kcx check, sign, verify, report): nothing is prepared
    // for threshold drags. The window's evaluator sorts the values an exceedance test
    // counts once, when the clause is built, so that a drag counts by binary search; a
    // one-shot evaluation would spend most of its time on that sort (1.5 s of 2.2 s at 20M
    // tokens, issue 17). Results do not depend on it.
    void setOneShot(bool oneShot = true) { oneShot_ = oneShot; }

    // Evaluates every clause (computing what is not cached), escalation and bounds.
    // Throws std::invalid_argument for an unknown stage; Cancelled when asked to stop.
    Evaluation evaluate(const EvaluateOptions& options = {}, const Progress& progress = {});

    // Replaces one threshold of a clause ("max", "min", "level", "confidence",
    // "min_coverage", "max_nonfinite_fraction"). Only that clause is re-decided on the
    // next evaluate(). Throws std::invalid_argument for an unknown clause or name.
    void setThreshold(const std::string& clauseId, const std::string& which, double value);
    // Replaces a whole clause (same id); its cached groups are rebuilt on the next evaluate().
    void replaceClause(const Clause& clause);

    struct ClauseState;   // cached per-clause data (evaluator_clauses.cpp)

private:
    bool oneShot_ = false;
    std::shared_ptr<MetricEngine> engine_;
    Contract contract_;
    std::map<std::string, std::unique_ptr<ClauseState>> states_;
    std::map<std::string, std::vector<Result>> decided_;   // per clause, until it changes
};

// Whether a rule's `when` holds for a result at a stage (a default rule: always; the
// result's status is the caller's to check). `persist` and `until` are not looked at.
bool ruleMatches(const EscalationRule& rule, const Contract& contract, const Result& result, const std::string& stage);

// Picks the escalation action for one result at one stage (first matching rule wins;
// `warn` when no rule matches a non-pass result; `pass` for a pass).
Action escalate(const Contract& contract, const Result& result, const std::string& stage);

// The bounds a result was (or would have been) compared with: its own, or, for a result
// that could not be decided (too few samples, no values) and so carries none, its
// clause's (not for coverage and nonfinite_fraction, whose bounds are not min/max).
std::pair<std::optional<double>, std::optional<double>> comparedBounds(const Result& r, const Contract& contract);

// The stage an evaluation decides for (options.stage, else the contract's first); throws
// std::invalid_argument for a stage the contract does not name.
std::string evaluationStage(const Contract& contract, const EvaluateOptions& options);
// Escalation per stage, each result's action at ev.stage, and the verdict, from ev.results.
void finishEvaluation(const Contract& contract, Evaluation& ev);

// One-shot convenience: evaluate a contract against a run.
Evaluation evaluateContract(const Contract& contract, std::shared_ptr<const Run> run,
                            const EvaluateOptions& options = {}, const Progress& progress = {});

}  // namespace kcx
