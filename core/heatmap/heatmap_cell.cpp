// One heatmap cell: what its tooltip says and which sequence a click on it opens.
#include <algorithm>
#include <vector>

#include "core/heatmap/heatmap.h"

namespace kcx {

namespace {

// The values of one sequence at positions [p0, p1).
struct SeqBin {
    double sum = 0, max = -INFINITY;
    uint32_t n = 0, above = 0;
    size_t argmax = 0;
    std::vector<double> values;   // kept for a quantile
};

// The values of sequence s at positions [p0, p1) that count in index row r and in the
// request's scope.
SeqBin scan(const HeatmapIndex& index, const HeatmapRequest& req, size_t r, size_t s, size_t p0, size_t p1) {
    const Run& run = index.run();
    const size_t begin = run.seqBegin(s);
    const double* v = index.values().values.data() + begin;
    const bool masked = index.tokenRows() != nullptr;
    const uint8_t* scope = req.scope && req.scope->size() == run.tokenCount() ? req.scope->data() : nullptr;
    const bool keep = req.aggregate == HeatmapAggregate::Quantile;
    SeqBin b;
    for (size_t t = p0, e = std::min(p1, run.seqLength(s)); t < e; ++t) {
        const double x = v[t];
        if (x != x || (masked && !index.counts(r, begin + t)) || (scope && !scope[begin + t]))
            continue;
        b.sum += x;
        ++b.n;
        b.above += x > req.threshold;
        if (keep)
            b.values.push_back(x);
        if (x > b.max) {
            b.max = x;
            b.argmax = t;
        }
    }
    return b;
}

double aggregateOf(SeqBin& b, const HeatmapRequest& req) {
    switch (req.aggregate) {
    case HeatmapAggregate::Mean: return b.sum / double(b.n);
    case HeatmapAggregate::Max: return b.max;
    case HeatmapAggregate::ShareAbove: return double(b.above) / double(b.n);
    case HeatmapAggregate::Quantile: return cellQuantile(b.values.data(), b.values.size(), req.quantile);
    }
    return NAN;
}

}  // namespace

HeatmapCell cellDetails(const HeatmapIndex& index, const HeatmapGrid& grid, size_t r, size_t c) {
    HeatmapCell cell;
    if (r >= grid.rows || c >= grid.cols)
        return cell;
    cell.row0 = grid.rowBins.lo(r);
    cell.row1 = grid.rowBins.hi(r);
    cell.pos0 = grid.colBins.lo(c);
    cell.pos1 = grid.colBins.hi(c);
    const size_t k = grid.at(r, c);
    cell.value = grid.value[k];
    cell.max = grid.max[k];
    cell.n = grid.n[k];
    cell.few = grid.few(r, c);
    const size_t rows = cell.row1 - cell.row0;
    if (rows == 1) {
        cell.rowLabel = index.row(cell.row0).label;
        cell.slice = index.sliceText(cell.row0);
    } else {
        cell.rowLabel = index.row(cell.row0).label + " … " + index.row(cell.row1 - 1).label + " (" +
                        std::to_string(rows) + " rows)";
        if (index.spec().mode == HeatmapRows::Conditions)
            cell.slice = conditionsText(index.spec().conditions);
        else if (index.spec().mode == HeatmapRows::SequencesOfSlice)
            cell.slice = index.spec().sliceKey + "=" + index.spec().sliceValue;
        else if (index.sliceRows())
            cell.slice = index.spec().sliceKey;
    }
    for (size_t row = cell.row0; row < cell.row1; ++row)
        for (uint32_t s : index.row(row).sequences)
            cell.above += scan(index, grid.request, row, s, cell.pos0, cell.pos1).above;
    return cell;
}

std::optional<HeatmapTarget> cellTarget(const HeatmapIndex& index, const HeatmapGrid& grid,
                                        size_t r, size_t c) {
    if (r >= grid.rows || c >= grid.cols || grid.n[grid.at(r, c)] == 0)
        return std::nullopt;
    const size_t p0 = grid.colBins.lo(c), p1 = grid.colBins.hi(c);
    std::optional<HeatmapTarget> best;
    double bestValue = -INFINITY, bestMax = -INFINITY;
    for (size_t row = grid.rowBins.lo(r); row < grid.rowBins.hi(r); ++row) {
        for (uint32_t s : index.row(row).sequences) {
            SeqBin b = scan(index, grid.request, row, s, p0, p1);
            if (b.n == 0)
                continue;
            const double value = aggregateOf(b, grid.request);
            const bool better = !best || value > bestValue || (value == bestValue && b.max > bestMax) ||
                                (value == bestValue && b.max == bestMax && s < best->sequence);
            if (better) {
                best = HeatmapTarget{s, b.argmax};
                bestValue = value;
                bestMax = b.max;
            }
        }
    }
    return best;
}

}  // namespace kcx
