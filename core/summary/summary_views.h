// What the window and the report show of a summary (SPEC 10, docs/summaries.md): one
// statistic of one metric per cell, as a grid of slice values × position buckets (the
// heatmap) or as a series over steps, each read from the summary's cells alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/summary/summary.h"

namespace kcx {

enum class CellStat {
    Mean,       // exact (the summary's exact sums)
    Max,        // exact
    Quantile,   // from the sketch: within 1 % of the exact type-7 quantile (SPEC 10)
    Count,      // how many values the cell has (exact)
};

struct CellStatSpec {
    CellStat stat = CellStat::Mean;
    double q = 0.99;   // Quantile
};

// "mean", "max", "p99 (sketch)", "count".
std::string cellStatName(const CellStatSpec& spec);
// The statistic of a metric's cell; NaN when the cell has no value.
double cellStat(const MetricCell& cell, const CellStatSpec& spec);
// The standard error of a cell's mean ΣS/Σn with sequences as the unit (the delta method:
// Var ≈ m/(m−1) · Σ(S_s − μ n_s)² / (Σn)², from the per-sequence sums the cell keeps); NaN
// with fewer than two sequences.
double meanStandardError(const MetricCell& cell);

// A metric's cell for (key, value, pos), at one step or merged over every step; nullopt
// when the summary has no such cell or the metric has no value there.
std::optional<MetricCell> summaryMetricCell(const RunSummary& s, const std::string& metric, const std::string& key,
                                            const std::string& value, int pos, std::optional<int64_t> step);

// What a summary holds before any cell's figures, from one walk over its cells (a 1,000-step
// summary has 34,000; a walk costs about 10 ms there, and the window used to make ten).
struct SummaryOutline {
    uint64_t sequences = 0, tokens = 0;   // RunSummary::sequences(), tokens()
    std::vector<int64_t> steps;           // RunSummary::steps()
    // The keys a grid's rows can be: "step" (when there are several steps), then every slice
    // key the summary has cells of (labelled, then derived), in name order.
    std::vector<std::string> rowKeys;
    // The metrics with at least one value in the summary, in catalogue order (SPEC 2).
    std::vector<std::string> metrics;
};
SummaryOutline summaryOutline(const RunSummary& s);
std::vector<std::string> summaryRowKeys(const RunSummary& s);   // summaryOutline(s).rowKeys
std::vector<std::string> summaryMetrics(const RunSummary& s);   // summaryOutline(s).metrics

// Rows: "all" then each value of rowKey ("" = one row "all"; "step" = one row per step).
// Columns: "all positions" then each position bucket (derived.pos_bucket's values).
// Positions are crossed only with sequence-level keys; a token-level derived key's rows
// have a value in the first column only.
struct SummaryGrid {
    std::string metric, rowKey;
    CellStatSpec stat;
    std::vector<std::string> rows, columns;
    std::vector<double> values;        // rows × columns, NaN where empty
    std::vector<uint64_t> counts;      // values per cell
    // A grid cell's place in the summary (rowKey "step": key "" and the row's step).
    struct Place {
        std::string key, value;
        int pos = -1;
        std::optional<int64_t> step;   // nullopt: every step
    };
    std::vector<Place> places;         // rows × columns
    size_t rowCount() const { return rows.size(); }
    size_t columnCount() const { return columns.size(); }
    double value(size_t r, size_t c) const { return values[r * columns.size() + c]; }
    double minValue() const;           // over non-empty cells (NaN when none)
    double maxValue() const;
};
// step: only that step's cells (nullopt: merged over every step; ignored for rowKey "step").
SummaryGrid summaryGrid(const RunSummary& s, const std::string& metric, const std::string& rowKey,
                        std::optional<int64_t> step, const CellStatSpec& stat);

// One point of a metric's series over steps for one scope.
struct StepPoint {
    int64_t step = -1;
    uint64_t count = 0, sequences = 0;
    double value = NAN;                // the statistic
    double lo = NAN, hi = NAN;         // Mean: ± 1.96 standard errors over sequences
};
std::vector<StepPoint> summarySteps(const RunSummary& s, const std::string& metric, const std::string& key,
                                    const std::string& value, int pos, const CellStatSpec& stat);

// The worst entries kept for a metric in a scope (over every step or one), worst first.
std::vector<WorstEntry> summaryWorst(const RunSummary& s, const std::string& metric, const std::string& key,
                                     const std::string& value, int pos, std::optional<int64_t> step);

}  // namespace kcx
