// `kcx compare` (SPEC 9, docs/steps.md): is B's kernel pair worse than A's? For each metric
// and slice, the aggregate in A and in B (estimate.h), the difference B − A with a 95 %
// interval that treats sequences as the unit (the two runs' sequences are independent:
// SE = √(SE_A² + SE_B²)), a two-sided p-value from z = (B − A) / SE, Benjamini–Hochberg
// q-values over everything tested, and a verdict: `worse` (q ≤ Q and B higher), `better`
// (q ≤ Q and B lower) or `same`. Higher is worse for every metric: for a signed one
// (log_ratio, reward_diff) compare its absolute value's metric instead.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/evaluate/evaluator_summary.h"
#include "core/metrics/aggregate.h"
#include "core/steps/estimate.h"

namespace kcx {

struct CompareOptions {
    std::vector<std::string> metrics{"abs_log_ratio"};
    Aggregate aggregate;                 // default: mean
    std::string perSlice;                // "" = the whole runs
    // Also split every slice by this second key (runs only; a token-level derived key such
    // as derived.pos_bucket, or a label): one result per pair of values.
    std::string crossKey;
    double q = 0.05;                     // false discovery rate
    double ppoClip = 0.2;
    int threads = 0;
    int resamples = 200;                 // bootstrap (max, min, quantiles on runs)
    uint64_t seed = 7;
};

struct CompareResult {
    std::string metric;
    std::vector<std::pair<std::string, std::string>> slice;   // empty: the whole runs
    Estimate a, b;
    double diff = 0, lo = 0, hi = 0, p = 1, q = 1;
    std::string verdict;                 // worse | better | same
};

// A metric and slice that could not be tested, and why.
struct CompareSkip {
    std::string metric;
    std::vector<std::pair<std::string, std::string>> slice;
    std::string why;
};

struct Comparison {
    std::string aggregate, interval;
    double q = 0.05;
    std::vector<CompareResult> results;
    std::vector<CompareSkip> skipped;
    bool anyWorse() const;
};

// Throws std::invalid_argument for what the inputs cannot answer (an unknown metric or key,
// an aggregate a summary has no interval for).
Comparison compareRuns(const EvaluationData& a, const EvaluationData& b, const CompareOptions& options,
                       const Progress& progress = {});

nlohmann::json compareJson(const Comparison& c);

}  // namespace kcx
