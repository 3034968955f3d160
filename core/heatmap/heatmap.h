// The divergence heatmap's numbers: rows (slice values or sequences) by token position.
//
// Work is split in two so that the window stays responsive:
//  * HeatmapIndex::build, once per (run, metric, row mode): the rows, their order, and for
//    slice rows a per-position profile (sum, count, max over the slice's sequences);
//  * computeGrid, on every zoom, pan, resize, aggregate or threshold change: rows x columns
//    cells over a row range and a position range, each reduced to at most the requested
//    number of bins (pixels). Its cost is one pass over the tokens in view (sequence rows)
//    or over the profile (slice rows), in parallel over grid rows.
// A position is the 0-based index of a token within its sequence. Empty cells are NaN.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/formats/run.h"
#include "core/metrics/metrics.h"

namespace kcx {

struct DerivedCodes;   // core/metrics/derived_slices.h

// A slice key is a labeled key of the run or a derived key (derived.pos_bucket, ...).
// Per-token derived keys split sequences: a row of derived.pos_bucket=pos_0_64 holds the
// first 64 tokens of every sequence, and only those tokens count in its cells.
enum class HeatmapRows {
    SliceValues,        // one row per value of a slice key (+ "(unlabeled)" when needed)
    SequencesOfSlice,   // the sequences of one slice value, most divergent first
    AllSequences,       // every sequence, most divergent first
    Conditions,         // two rows: where every condition holds (a finding), and the rest
};

enum class HeatmapAggregate {
    Mean,         // mean of the values in the cell
    Max,          // largest value in the cell
    ShareAbove,   // fraction of the values in the cell strictly above the threshold
    Quantile,     // the request's quantile (type 7, as SPEC 3) of the values in the cell
};

// Which cells a clause's limit marks: none (no clause, or a cell statistic that is not the
// clause's own), those whose value is above the limit (a max), or below it (a min).
enum class HeatmapMark { None, Above, Below };

struct HeatmapRowSpec {
    HeatmapRows mode = HeatmapRows::AllSequences;
    std::string sliceKey;     // SliceValues and SequencesOfSlice
    std::string sliceValue;   // SequencesOfSlice
    std::vector<std::pair<std::string, std::string>> conditions{};   // Conditions: key = value, all hold
};

// The codes of a derived key (DerivedSlices::get); build() asks it only for derived keys.
using DerivedLookup = std::function<std::shared_ptr<const DerivedCodes>(const std::string& key)>;

// "task=code ∧ derived.pos_bucket=pos_1024_4096": the label of a Conditions row.
std::string conditionsText(const std::vector<std::pair<std::string, std::string>>& conditions);

// Splits [begin, end) into min(end - begin, maxBins) contiguous bins of near-equal size:
// bin i is [begin + ceil(i*W/B), begin + ceil((i+1)*W/B)). Item x lies in bin
// floor((x - begin) * B / W). The same rule maps grid cells to pixels and back.
struct Bins {
    size_t begin = 0, width = 0, count = 0;
    Bins() = default;
    Bins(size_t begin, size_t end, size_t maxBins)
        : begin(begin), width(end > begin ? end - begin : 0), count(std::min(width, maxBins)) {}
    size_t lo(size_t i) const { return count ? begin + (i * width + count - 1) / count : begin; }
    size_t hi(size_t i) const { return lo(i + 1); }
    size_t binOf(size_t x) const { return (x - begin) * count / width; }
};

struct HeatmapRow {
    std::string label;               // slice value or sequence id
    std::vector<uint32_t> sequences; // the slice's sequences, or the one sequence
    double score = NAN;              // mean of the metric over the row's values (sort key)
    uint64_t n = 0;                  // how many values the row has
    size_t length = 0;               // longest sequence of the row (positions [0, length))
    size_t profile = 0;              // slice rows: where the row's profile starts
};

class HeatmapIndex {
public:
    // Throws std::invalid_argument when the metric is not per token or the slice key/value
    // does not exist (a derived key without `derived` does not exist); Cancelled when
    // progress asks to stop. threads: 0 = one per core.
    static std::shared_ptr<const HeatmapIndex> build(std::shared_ptr<const Run> run,
                                                     std::shared_ptr<const MetricValues> values,
                                                     const HeatmapRowSpec& spec,
                                                     const Progress& progress = {}, int threads = 0,
                                                     const DerivedLookup& derived = {});

    const Run& run() const { return *run_; }
    const MetricValues& values() const { return *values_; }
    const HeatmapRowSpec& spec() const { return spec_; }
    bool sliceRows() const {
        return spec_.mode == HeatmapRows::SliceValues || spec_.mode == HeatmapRows::Conditions;
    }
    // When rows split sequences (a per-token derived key): per token of the run, the slice
    // row it belongs to (slice rows) or >= 0 when it counts at all (sequence rows); -1 =
    // in no row. nullptr when whole sequences make the rows.
    const int32_t* tokenRows() const { return tokenRow_.empty() ? nullptr : tokenRow_.data(); }
    // Whether the token at run index i counts in row r.
    bool counts(size_t r, size_t i) const {
        return tokenRow_.empty() || (sliceRows() ? tokenRow_[i] == int32_t(r) : tokenRow_[i] >= 0);
    }
    size_t rowCount() const { return rows_.size(); }
    const HeatmapRow& row(size_t r) const { return rows_[r]; }
    size_t maxLength() const { return maxLength_; }      // positions [0, maxLength)
    double minValue() const { return min_; }             // over all values (NaN when none)
    double maxValue() const { return max_; }
    // "key=value, key=value" for a sequence (all keys), or "key=value" for a slice row.
    std::string sliceText(size_t row) const;

    // Slice rows: per position of the row, sum/count/max over the slice's sequences.
    const double* profileSum(size_t r) const { return profSum_.data() + rows_[r].profile; }
    const uint32_t* profileCount(size_t r) const { return profN_.data() + rows_[r].profile; }
    const double* profileMax(size_t r) const { return profMax_.data() + rows_[r].profile; }

private:
    std::shared_ptr<const Run> run_;
    std::shared_ptr<const MetricValues> values_;
    HeatmapRowSpec spec_;
    std::vector<HeatmapRow> rows_;
    std::vector<int32_t> tokenRow_;
    size_t maxLength_ = 0;
    double min_ = NAN, max_ = NAN;
    std::vector<double> profSum_, profMax_;
    std::vector<uint32_t> profN_;
};

struct HeatmapRequest {
    size_t row0 = 0, row1 = 0;      // index rows [row0, row1)
    size_t rowBins = 1;             // at most this many grid rows
    size_t pos0 = 0, pos1 = 0;      // positions [pos0, pos1)
    size_t columns = 1;             // at most this many grid columns
    HeatmapAggregate aggregate = HeatmapAggregate::Mean;
    double threshold = 0;           // ShareAbove's level, and the "k above" of a tooltip
    double quantile = 0.5;          // Quantile: q in [0, 1]
    HeatmapMark mark = HeatmapMark::None;
    double markLevel = 0;           // the limit a marked cell breaks (see marked)
    uint32_t fewBelow = 0;          // a cell with fewer values rests on too little data
    // Slice rows: use fewer, wider position bins than `columns` when pixel-wide ones would
    // leave most cells below fewBelow (a p99.9 needs ~1,000 values): the most columns for
    // which at least 3 in 4 non-empty cells have fewBelow values (HeatmapGrid::colBins).
    bool widenForFew = false;
    // The tokens that count (a clause's `where` and `positions`): one byte per token of the
    // run, non-zero = counts; nullptr = every token.
    std::shared_ptr<const std::vector<uint8_t>> scope{};
};

// rows x cols cells, row-major. A grid row pools the index rows of its bin and a grid
// column the positions of its bin: mean = sum / n over every value, max, share above.
struct HeatmapGrid {
    HeatmapRequest request;
    Bins rowBins, colBins;
    size_t rows = 0, cols = 0;
    std::vector<double> value;      // NaN where n == 0
    std::vector<double> max;        // largest value, NaN where n == 0
    std::vector<uint32_t> n;        // values in the cell
    double lo = NAN, hi = NAN;      // finite range of `value` over the grid
    size_t at(size_t r, size_t c) const { return r * cols + c; }
    // A cell breaks the clause's limit when its value is above (HeatmapMark::Above) or below
    // (Below) request.markLevel. The window asks for marks only when the cell's statistic
    // is the selected clause's own (its quantile, share above its level, or mean) over the
    // clause's scope, so a mark compares like with like.
    bool marked(size_t r, size_t c) const {
        const double v = value[at(r, c)];
        switch (request.mark) {
        case HeatmapMark::None: return false;
        case HeatmapMark::Above: return v > request.markLevel;
        case HeatmapMark::Below: return v < request.markLevel;
        }
        return false;
    }
    // A non-empty cell with fewer than request.fewBelow values: drawn faded.
    bool few(size_t r, size_t c) const {
        const uint32_t k = n[at(r, c)];
        return k > 0 && k < request.fewBelow;
    }
};

// Computes the grid; throws Cancelled when progress asks to stop. Ranges are clamped to
// the index (rows) and to [0, maxLength) (positions); an empty range gives an empty grid.
HeatmapGrid computeGrid(const HeatmapIndex& index, const HeatmapRequest& request,
                        const Progress& progress = {}, int threads = 0);

// What a tooltip shows for one cell.
struct HeatmapCell {
    std::string rowLabel;           // one row's label, or "first … last (k rows)"
    std::string slice;              // slice labels of the row (see sliceText)
    size_t row0 = 0, row1 = 0;      // index rows of the cell
    size_t pos0 = 0, pos1 = 0;      // positions [pos0, pos1)
    double value = NAN, max = NAN;
    uint32_t n = 0;
    uint32_t above = 0;             // values strictly above the threshold
    bool few = false;               // fewer values than the request's fewBelow
};
HeatmapCell cellDetails(const HeatmapIndex& index, const HeatmapGrid& grid, size_t r, size_t c);

// Which sequence a click on a cell opens: the sequence of the cell's rows whose own
// aggregate over the cell's positions is largest (ties: larger max, then lower index),
// and the position of its largest value there. nullopt for an empty cell.
struct HeatmapTarget {
    size_t sequence = 0;
    size_t position = 0;
};
std::optional<HeatmapTarget> cellTarget(const HeatmapIndex& index, const HeatmapGrid& grid,
                                        size_t r, size_t c);

const char* aggregateName(HeatmapAggregate a);   // "mean", "max", "share above", "quantile"

// Values a cell needs before its statistic means much: 10 for a mean, a max or a share,
// and 1 / (1 − q) for a quantile q ≥ 0.5 (1 / q below), at least 10: with fewer values a
// p99.9 is only the cell's largest value.
uint32_t fewValuesFor(HeatmapAggregate aggregate, double q);

// The type-7 quantile q of values[0, n) (reorders them); NaN when n == 0.
double cellQuantile(double* values, size_t n, double q);

}  // namespace kcx
