// A metric over training steps (SPEC 7, `kcx steps`; docs/steps.md): per step, the
// aggregate with an interval that treats sequences as the unit, the counts, robust
// companions (median, 10 % trimmed mean), the onset of a sustained rise (onset.h), spikes,
// and for each flagged step the sequences and tokens that contribute most. From a run or
// from a summary (SPEC 10). Per slice with --per-slice: false alarms are held at α across
// the slices' series (Bonferroni: each series is tested at α / series).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/formats/run.h"
#include "core/metrics/aggregate.h"
#include "core/steps/onset.h"

namespace kcx {

class MetricEngine;
struct MetricValues;
struct DerivedCodes;
struct RunSummary;

struct StepsOptions {
    std::string metric = "abs_log_ratio";
    Aggregate aggregate;                // default: mean
    std::string perSlice;               // "" = one series over every sequence
    double alpha = 0.05;                // onset false alarms over the series (and slices)
    size_t top = 5;                     // contributors listed per flagged step
    int resamples = 200;                // bootstrap replicates (max, min, quantiles)
    uint64_t seed = 7;                  // the bootstrap's
    // Only these tokens (one byte per token of the run; a clause's `where` and `positions`,
    // core/evaluate/clause_scope.h); null: every token. Runs only.
    std::shared_ptr<const std::vector<uint8_t>> scope;
};

struct StepContributor {
    std::string id;                     // the sequence's id
    int64_t position = -1;              // a token's position; −1 for a sequence
    double value = 0;                   // a token's value; a sequence's excess (below)
    double share = 0;                   // a sequence's share of the step's excess
};

struct StepFlag {
    int64_t step = 0;
    bool onset = false, spike = false;
    // Sequences ranked by their excess over the baseline: Σ (v − μb) over their values in
    // the step, μb the mean of the baseline steps' values (raw runs only); tokens ranked
    // by value (a summary: the worst entries it kept, by |value|).
    std::vector<StepContributor> sequences, tokens;
};

struct StepPointResult {
    int64_t step = 0;
    std::optional<double> value;        // the aggregate; none over zero values
    std::optional<std::pair<double, double>> ci;   // 95 %, sequences as the unit
    uint64_t n = 0, sequences = 0;
    std::optional<double> median, trimmedMean;
    std::optional<double> z;            // standardised departure from the baseline
};

struct StepSeries {
    std::vector<std::pair<std::string, std::string>> slice;   // empty: every sequence
    std::vector<StepPointResult> steps;
    OnsetResult test;                   // indices into the steps that have a value
    std::optional<int64_t> onsetStep, alarmStep;
    std::vector<StepFlag> flags;
};

struct StepsResult {
    std::string metric, aggregate, perSlice;
    bool summary = false;
    std::string interval;               // how ci was formed
    double alpha = 0.05, seriesAlpha = 0.05;
    uint64_t sequencesWithoutStep = 0;
    std::vector<StepSeries> series;
    std::shared_ptr<const std::vector<uint8_t>> scope;   // StepsOptions::scope, kept for the caller
    // A run's: the metric's values and the per_slice key's derived codes (null for a label),
    // kept so that a caller can find a step's tokens without asking the engine again.
    std::shared_ptr<const MetricValues> values;
    std::shared_ptr<const DerivedCodes> derived;
};

// Throws std::invalid_argument with a sentence for what the data cannot
// answer (no steps, an unknown metric or key, a per-run metric).
StepsResult stepsOfRun(MetricEngine& engine, const StepsOptions& options, const Progress& progress = {});
StepsResult stepsOfSummary(const RunSummary& summary, const StepsOptions& options);

// SPEC 7's JSON, with the project's additions (docs/steps.md).
nlohmann::json stepsJson(const StepsResult& r);

}  // namespace kcx
