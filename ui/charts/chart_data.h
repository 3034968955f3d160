// What the charts draw, computed without Qt so that it runs on worker threads and the
// tests can check it against hand-computed numbers: histogram bins, a downsampled
// p_train/p_inf scatter, per-position means, and which thresholds of a clause are in the
// units of its metric's values (those a chart can draw on a value axis).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/formats/run.h"

namespace kcx::ui {

// ---- histogram (histogram_bins.cpp) ------------------------------------------------------
struct Histogram {
    bool logX = false;
    double lo = 0, hi = 1;            // the binned range; log10 of the values when logX
    std::vector<uint64_t> counts;     // equal-width bins over [lo, hi]; the last is closed
    uint64_t shown = 0;               // values in the bins
    uint64_t missing = 0;             // not logged or absent
    uint64_t nonfinite = 0;           // NaN or infinite
    uint64_t nonpositive = 0;         // finite but <= 0: not on a log axis
    uint64_t maxCount() const;
    double edge(size_t i) const;      // the i-th bin edge in value units (0 .. bins)
};

// Bins the finite values (with logX, the positive ones, equal-width in log10). When all
// shown values are equal the range is widened so that they fall in the middle bin.
// Checks progress every million values (throws Cancelled when it asks to stop).
Histogram computeHistogram(std::span<const double> values, int bins, bool logX, const Progress& progress = {});

// ---- p_train against p_inf (scatter_sample.cpp) -------------------------------------------
struct ScatterSample {
    std::vector<size_t> index;        // token indices, ascending
    std::vector<double> pTrain, pInf; // exp(lp) of those tokens
    std::vector<uint8_t> extreme;     // 1 when kept for its large |log ratio|
    size_t valid = 0;                 // tokens with both log-probs finite
    size_t total = 0;                 // all tokens
};

// All valid tokens when there are at most maxPoints of them; otherwise the
// extremeShare * maxPoints tokens with the largest |lp_train - lp_inf| plus tokens taken
// at even steps through the run, at most maxPoints in all. Deterministic.
ScatterSample sampleScatter(const Run& run, size_t maxPoints, double extremeShare = 0.25,
                            const Progress& progress = {});

// ---- a metric against token position (position_means.cpp) ----------------------------------
struct PositionSeries {
    std::string label;                // slice value, "(unlabeled)" or "all"
    std::vector<double> x;            // bin centre (token position)
    std::vector<double> mean;         // mean of the values in the bin
    std::vector<uint64_t> count;      // values behind each mean
};
struct PositionMeans {
    size_t binWidth = 1;              // positions per bin: ceil(longest / maxBins)
    size_t longest = 0;               // the run's longest sequence
    std::vector<PositionSeries> series;   // one per slice value with data, in value order
    uint64_t fewBins = 0;             // points resting on fewer than the statistic's fewBelow values
};

// What a point of the position chart is: the mean (default), a selected clause's quantile
// (type 7, as SPEC 3) or its share above a level, over the tokens of a scope.
struct PositionStatistic {
    enum class Kind { Mean, Quantile, ShareAbove };
    Kind kind = Kind::Mean;
    double q = 0.5;                   // Quantile
    double level = 0;                 // ShareAbove
    uint32_t fewBelow = 0;            // Quantile: bins are widened until 3 in 4 have this many
    std::string name = "mean";        // axis and title, e.g. "p99.9"
};

// `statistic` of a per-token metric per position bin, one series per value of slice key
// `sliceKey` (an index into run.slices.keys; -1: one series "all"), counting only tokens
// whose scope byte is non-zero (scope: one byte per token, or null for all). Bins without
// values are left out of a series; series without values are left out. For a quantile
// with fewBelow, the bin width grows (from ceil(longest / maxBins)) until at least 3 in 4
// non-empty bins hold fewBelow values, as the heatmap's columns do.
PositionMeans computePositionMeans(const Run& run, std::span<const double> tokenValues, int sliceKey,
                                   size_t maxBins, const Progress& progress = {}, const uint8_t* scope = nullptr,
                                   const PositionStatistic& statistic = {});

// ---- thresholds on the value axis (chart_data.cpp) ----------------------------------------
struct ValueLine {
    std::string which;                // "max", "min", "level"; "aggregate" for a fixed level
    double value = 0;
    bool editable = true;             // a Session::setThreshold() name
    std::string label;                // e.g. "S1 level" (charts add the value)
};

// The lines of a clause that are values of its metric: min/max of a numerical clause whose
// aggregate is a value (max, min, mean, quantile), the level of fraction_above (fixed),
// the level of an exceedance test, min/max of a mean test. Empty for other clauses.
std::vector<ValueLine> valueLines(const Clause& clause);

}  // namespace kcx::ui
