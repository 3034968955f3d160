// A contract evaluated on a summary (SPEC 10, docs/summaries.md): each result has the status
// the raw run would give, or is inconclusive with a reason that names what the summary
// does not resolve (a quantile whose sketch interval straddles the threshold, a `where`
// over two slice keys, positions off the summary's buckets, runtime and header clauses).
#pragma once

#include <memory>
#include <string>

#include "core/evaluate/evaluator.h"
#include "core/summary/summary.h"

namespace kcx {

// The mean test on a summary uses a normal interval over sequences (their sums and counts
// are kept, not the values the bootstrap resamples): it passes only when that interval,
// widened by this factor, lies within the bounds, and fails only when the interval narrowed
// by it already crosses one; in between it is inconclusive.
inline constexpr double kSummaryMeanMargin = 1.5;

// Throws std::invalid_argument for an unknown stage. The bound chain is not computed.
Evaluation evaluateContractOnSummary(const Contract& contract, const RunSummary& summary,
                                     const EvaluateOptions& options = {});

// What a contract is evaluated on: a run, or a summary of one (SPEC 10 accepts a summary
// wherever a run is). Converts from either pointer, so a run's callers need not change.
struct EvaluationData {
    std::shared_ptr<const Run> run;
    std::shared_ptr<const RunSummary> summary;
    EvaluationData() = default;
    EvaluationData(std::shared_ptr<const Run> r) : run(std::move(r)) {}                // NOLINT: implicit
    EvaluationData(std::shared_ptr<const RunSummary> s) : summary(std::move(s)) {}     // NOLINT: implicit
    explicit operator bool() const { return run || summary; }
};

// The summary's cells, or the run through evaluateContract.
Evaluation evaluateContractOn(const Contract& contract, const EvaluationData& data, const EvaluateOptions& options = {},
                              const Progress& progress = {});

// Reads a run file (loadRun) or a summary (readSummary), chosen by content.
EvaluationData loadEvaluationData(const std::string& path, const Progress& progress = {});

}  // namespace kcx
