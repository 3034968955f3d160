// One aggregate of a metric over a group of sequences, with its standard error and 95 %
// interval treating sequences as the unit (docs/steps.md): what `kcx steps` computes per
// step and `kcx compare` per run. From a run's values or from a summary's cell.
//
//   mean, fraction_above, fraction_outside: the ratio estimator ΣS_s / Σn_s over sequences
//       (S_s, n_s a sequence's sum of the (indicator) values and their count), its standard
//       error by the delta method, √(m/(m−1) Σ(S_s − μ n_s)²) / Σn_s;
//   sum: √(m/(m−1) Σ(S_s − S̄)²);
//   max, min, quantiles: a percentile bootstrap over sequences (2.5 % and 97.5 % of the
//       replicates; the standard error is the replicates' standard deviation); none from a
//       summary, which keeps no sequences to resample;
//   count: exact, no interval.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/formats/run.h"
#include "core/metrics/aggregate.h"

namespace kcx {

class MetricEngine;
struct MetricCell;
struct MetricInfo;
struct MetricValues;
struct DerivedCodes;
struct RunSummary;

// A group's values, sequence by sequence.
struct SequenceValues {
    std::vector<double> values;
    std::vector<uint32_t> seq;      // sequence index of each run of values
    std::vector<size_t> start;      // where that run starts in values
    void add(uint32_t s, double v) {
        if (seq.empty() || seq.back() != s) {
            seq.push_back(s);
            start.push_back(values.size());
        }
        values.push_back(v);
    }
    size_t end(size_t i) const { return i + 1 < start.size() ? start[i + 1] : values.size(); }
};

struct Estimate {
    std::optional<double> value;                   // none over zero values
    std::optional<std::pair<double, double>> ci;   // 95 %
    double se = NAN;                               // NaN: none
    uint64_t n = 0, sequences = 0;
    std::optional<double> median, trimmedMean;     // 10 % off each end (raw values only)
};

inline constexpr double kZ95 = 1.959963984540054;

Estimate estimateValues(const SequenceValues& g, const Aggregate& a, int resamples, uint64_t seed);
Estimate estimateCell(const MetricCell& c, const Aggregate& a);
// How the interval is formed, for the output.
std::string intervalMethod(const Aggregate& a, bool summary);
// True when the aggregate has a standard error from this kind of data.
bool hasStandardError(const Aggregate& a, bool summary);

// The metric's catalogue entry; std::invalid_argument for an unknown or per-run metric.
const MetricInfo* checkGroupedMetric(const std::string& metric);
// A summary's steps, ascending (no step left out); `withoutStep` gets the sequences without
// one. std::invalid_argument when it has no step.
std::vector<int64_t> summaryStepList(const RunSummary& sum, uint64_t& withoutStep);
// The values of a slice key a summary has cells of, sorted ({""} for no key);
// std::invalid_argument when it has none.
std::vector<std::string> summarySliceValues(const RunSummary& sum, const std::string& key);

// A run's finite values of a metric grouped by (step, slice value): group(st, c) is
// groups[st * sliceValues.size() + c]. Without byStep every sequence is in step group 0
// (steps = {0}); with it, sequences without a step are left out and counted.
struct GroupedValues {
    std::shared_ptr<const MetricValues> metric;
    std::shared_ptr<const DerivedCodes> derived;   // the key's codes when it is a derived key
    std::vector<std::string> sliceValues;          // {""} without a key
    std::vector<int64_t> steps;
    std::vector<SequenceValues> groups;
    uint64_t withoutStep = 0;
    const SequenceValues& group(size_t st, size_t c) const { return groups[st * sliceValues.size() + c]; }
    // The slice code of token i of sequence s (−1: no value), as grouped.
    std::function<int(size_t s, size_t i)> codeOf;
};
// Throws std::invalid_argument with a sentence for what the run cannot answer (unknown
// metric or key, a per-run metric, no steps when byStep, no value of the metric).
// With `scope` (one byte per token, core/evaluate/clause_scope.h), only the tokens in it.
GroupedValues groupRunValues(MetricEngine& engine, const std::string& metric, const std::string& perSlice,
                             bool byStep, const Progress& progress = {}, const std::vector<uint8_t>* scope = nullptr);

}  // namespace kcx
