// computeGrid: reduces the rows and positions in view to at most one cell per pixel.
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "core/base/parallel.h"
#include "core/heatmap/heatmap.h"
#include "core/metrics/metrics_kernels.h"

namespace kcx {

namespace {

// The accumulators of one cell.
struct Acc {
    double sum = 0, max = -INFINITY;
    uint32_t n = 0, above = 0;
};

// Where each position of [pos0, pos1) goes: colOf[t - pos0]. One pass over the tokens
// with a table lookup has no unpredictable branches, unlike a loop per column.
std::vector<uint32_t> columnsOf(const Bins& b) {
    std::vector<uint32_t> col(b.width);
    for (size_t c = 0; c < b.count; ++c)
        std::fill(col.begin() + (b.lo(c) - b.begin), col.begin() + (b.hi(c) - b.begin), uint32_t(c));
    return col;
}

// Adds the values of one sequence (v: its first token, len: its length; mask: its tokens'
// rows, only those >= 0 count, or nullptr when all do).
void addSequence(const double* v, const int32_t* mask, size_t len, const Bins& cols, const uint32_t* colOf,
                 double thr, Acc* a) {
    const size_t p0 = cols.begin, e = std::min(len, p0 + cols.width);
    for (size_t t = p0; t < e; ++t) {
        const double x = v[t];
        if (x != x || (mask && mask[t] < 0))
            continue;
        Acc& c = a[colOf[t - p0]];
        c.sum += x;
        ++c.n;
        c.above += x > thr;
        c.max = std::max(c.max, x);
    }
}

// Calls f(column, value) for the tokens of sequence s at the columns' positions that count
// in index row r and in the scope (one byte per token of the run, or nullptr). The general
// path: a clause's scope, or a quantile, cannot use a slice row's precomputed profile.
template <class F>
void forScoped(const HeatmapIndex& index, size_t r, size_t s, const uint8_t* scope, const Bins& cols,
               const uint32_t* colOf, F&& f) {
    const Run& run = index.run();
    const size_t begin = run.seqBegin(s), p0 = cols.begin, e = std::min(run.seqLength(s), p0 + cols.width);
    const double* v = index.values().values.data() + begin;
    const bool rows = index.tokenRows() != nullptr;
    for (size_t t = p0; t < e; ++t) {
        const double x = v[t];
        if (x != x || (scope && !scope[begin + t]) || (rows && !index.counts(r, begin + t)))
            continue;
        f(colOf[t - p0], x);
    }
}

// Adds those tokens to their cells, keeping each cell's values when `keep` (quantiles).
void addScoped(const HeatmapIndex& index, size_t r, size_t s, const uint8_t* scope, const Bins& cols,
               const uint32_t* colOf, double thr, Acc* a, std::vector<double>* keep) {
    forScoped(index, r, s, scope, cols, colOf, [&](uint32_t col, double x) {
        Acc& c = a[col];
        c.sum += x;
        ++c.n;
        c.above += x > thr;
        c.max = std::max(c.max, x);
        if (keep)
            keep[col].push_back(x);
    });
}

// A tail quantile (p99, p99.9) needs only a cell's largest values: with n known, the
// order statistics x[lo] and x[lo+1] are the k-th and (k-1)-th largest, k = n - lo, kept
// in a min-heap of k values as the tokens stream past (most fail one comparison), instead
// of copying every value of every cell and selecting in the copies.
constexpr size_t kTopMax = 4096;

// Counts the values above thr of one sequence (slice rows, share above); with rows, only
// the tokens of row r.
void addAbove(const double* v, const int32_t* rows, int32_t r, size_t len, const Bins& cols,
              const uint32_t* colOf, double thr, Acc* a) {
    const size_t p0 = cols.begin, e = std::min(len, p0 + cols.width);
    if (!rows) {
        for (size_t t = p0; t < e; ++t)
            a[colOf[t - p0]].above += v[t] > thr;
        return;
    }
    for (size_t t = p0; t < e; ++t)
        a[colOf[t - p0]].above += rows[t] == r && v[t] > thr;
}

// Adds a slice row's profile (sum, count, max per position).
void addProfile(const HeatmapIndex& index, size_t r, size_t len, const Bins& cols, const uint32_t* colOf,
                Acc* a) {
    const double* ps = index.profileSum(r);
    const uint32_t* pn = index.profileCount(r);
    const double* pm = index.profileMax(r);
    const size_t p0 = cols.begin, e = std::min(len, p0 + cols.width);
    for (size_t t = p0; t < e; ++t) {
        Acc& c = a[colOf[t - p0]];
        c.sum += ps[t];
        c.n += pn[t];
        c.max = pm[t] > c.max ? pm[t] : c.max;
    }
}

// The number of columns for widenForFew: counts the values of each grid row at each
// position of the view (one pass, as computeGrid's), then tries fewer and fewer columns.
size_t widenedColumns(const HeatmapIndex& index, const HeatmapRequest& req, const Bins& rows, size_t pos0,
                      size_t pos1) {
    const size_t P = pos1 - pos0, R = rows.count;
    size_t C = std::min(req.columns, P);
    if (R == 0 || P == 0 || R * P > (size_t(1) << 23))
        return C;
    const Run& run = index.run();
    const double* v = index.values().values.data();
    const uint8_t* scope = req.scope ? req.scope->data() : nullptr;
    std::vector<uint64_t> prefix(R * (P + 1), 0);   // per grid row: counts, then prefix sums
    for (size_t i = 0; i < R; ++i)
        for (size_t r = rows.lo(i); r < rows.hi(i); ++r)
            for (uint32_t s : index.row(r).sequences) {
                const size_t begin = run.seqBegin(s), e = std::min(run.seqLength(s), pos1);
                for (size_t t = pos0; t < e; ++t)
                    if (v[begin + t] == v[begin + t] && (!scope || scope[begin + t]) && index.counts(r, begin + t))
                        ++prefix[i * (P + 1) + (t - pos0) + 1];
            }
    for (size_t i = 0; i < R; ++i)
        for (size_t t = 0; t < P; ++t)
            prefix[i * (P + 1) + t + 1] += prefix[i * (P + 1) + t];
    for (; C > 1; C = C * 4 / 5) {
        const Bins cols(pos0, pos1, C);
        size_t nonEmpty = 0, enough = 0;
        for (size_t i = 0; i < R; ++i)
            for (size_t c = 0; c < cols.count; ++c) {
                const uint64_t n = prefix[i * (P + 1) + cols.hi(c) - pos0] - prefix[i * (P + 1) + cols.lo(c) - pos0];
                nonEmpty += n > 0;
                enough += n >= req.fewBelow;
            }
        if (enough * 4 >= nonEmpty * 3)
            break;
    }
    return std::max<size_t>(C, 1);
}

}  // namespace

const char* aggregateName(HeatmapAggregate a) {
    switch (a) {
    case HeatmapAggregate::Mean: return "mean";
    case HeatmapAggregate::Max: return "max";
    case HeatmapAggregate::ShareAbove: return "share above";
    case HeatmapAggregate::Quantile: return "quantile";
    }
    return "?";
}

uint32_t fewValuesFor(HeatmapAggregate aggregate, double q) {
    if (aggregate != HeatmapAggregate::Quantile)
        return 10;
    const double tail = std::min(q, 1.0 - q);
    if (!(tail > 0))
        return 10;
    return std::max<uint32_t>(10, uint32_t(std::ceil(1.0 / tail - 1e-9)));
}

double cellQuantile(double* values, size_t n, double q) {
    if (n == 0)
        return NAN;
    // Type 7: h = (n - 1) q, between the order statistics floor(h) and floor(h) + 1.
    const double h = double(n - 1) * std::clamp(q, 0.0, 1.0);
    const size_t lo = std::min(size_t(h), n - 1);
    std::nth_element(values, values + lo, values + n);
    const double a = values[lo];
    if (lo + 1 >= n)
        return a;
    const double b = *std::min_element(values + lo + 1, values + n);
    return a + (h - double(lo)) * (b - a);
}

HeatmapGrid computeGrid(const HeatmapIndex& index, const HeatmapRequest& req,
                        const Progress& progress, int threads) {
    HeatmapGrid g;
    g.request = req;
    const size_t row1 = std::min(req.row1, index.rowCount()), row0 = std::min(req.row0, row1);
    const size_t pos1 = std::min(req.pos1, index.maxLength()), pos0 = std::min(req.pos0, pos1);
    g.rowBins = Bins(row0, row1, std::max<size_t>(1, req.rowBins));
    size_t columns = std::max<size_t>(1, req.columns);
    if (req.widenForFew && req.fewBelow > 0 && index.sliceRows() && pos1 > pos0)
        columns = widenedColumns(index, req, g.rowBins, pos0, pos1);
    g.colBins = Bins(pos0, pos1, columns);
    g.rows = g.rowBins.count;
    g.cols = g.colBins.count;
    g.value.assign(g.rows * g.cols, NAN);
    g.max.assign(g.rows * g.cols, NAN);
    g.n.assign(g.rows * g.cols, 0);
    if (g.rows == 0 || g.cols == 0) {
        report(progress, 1);
        return g;
    }
    const std::vector<uint32_t> colOf = columnsOf(g.colBins);
    const double* v = index.values().values.data();
    const int32_t* tr = index.tokenRows();
    const Run& run = index.run();
    const double thr = req.threshold;
    const bool share = req.aggregate == HeatmapAggregate::ShareAbove;
    const bool quantile = req.aggregate == HeatmapAggregate::Quantile;
    const uint8_t* scope = req.scope ? req.scope->data() : nullptr;
    if (req.scope && req.scope->size() != run.tokenCount())
        throw std::invalid_argument("heatmap scope: one entry per token of the run expected");
    // A slice row's profile holds every token of the row: a scope or a quantile needs the
    // tokens themselves.
    const bool scoped = scope != nullptr || quantile;

    const size_t chunks = std::min(g.rows, size_t(resolveThreads(threads)) * 8);
    detail::ChunkProgress prog(progress, chunks);
    const double qc = std::clamp(req.quantile, 0.0, 1.0);
    // k = n - lo of a cell of n values: how many of its largest the quantile needs.
    const auto topCount = [&](uint32_t n) {
        const double h = double(n - 1) * qc;
        return size_t(n) - std::min(size_t(h), size_t(n) - 1);
    };
    parallelChunks(g.rows, chunks, threads, [&](size_t, size_t rb, size_t re) {
        std::vector<Acc> acc(g.cols);
        std::vector<std::vector<double>> kept(quantile ? g.cols : 0);
        Acc* a = acc.data();
        for (size_t i = rb; i < re; ++i) {
            std::fill(acc.begin(), acc.end(), Acc{});
            for (auto& k : kept)
                k.clear();
            // A tail quantile: counts first (one pass, nothing kept), then each cell's
            // largest values in a bounded heap when every cell needs few of them.
            bool top = false;
            if (quantile) {
                for (size_t r = g.rowBins.lo(i); r < g.rowBins.hi(i); ++r)
                    for (uint32_t s : index.row(r).sequences)
                        addScoped(index, r, s, scope, g.colBins, colOf.data(), thr, a, nullptr);
                top = true;
                for (size_t c = 0; c < g.cols && top; ++c)
                    top = a[c].n == 0 || topCount(a[c].n) <= kTopMax;
                if (!top)
                    std::fill(acc.begin(), acc.end(), Acc{});
            }
            if (top) {
                std::vector<size_t> want(g.cols);
                for (size_t c = 0; c < g.cols; ++c)
                    want[c] = a[c].n ? topCount(a[c].n) : 0;
                for (size_t r = g.rowBins.lo(i); r < g.rowBins.hi(i); ++r)
                    for (uint32_t s : index.row(r).sequences)
                        forScoped(index, r, s, scope, g.colBins, colOf.data(), [&](uint32_t c, double x) {
                            std::vector<double>& h = kept[c];
                            if (h.size() < want[c]) {
                                h.push_back(x);
                                std::push_heap(h.begin(), h.end(), std::greater<>());
                            } else if (x > h.front()) {
                                std::pop_heap(h.begin(), h.end(), std::greater<>());
                                h.back() = x;
                                std::push_heap(h.begin(), h.end(), std::greater<>());
                            }
                        });
            }
            for (size_t r = g.rowBins.lo(i); r < g.rowBins.hi(i) && !top; ++r) {
                const HeatmapRow& row = index.row(r);
                if (scoped) {
                    for (uint32_t s : row.sequences)
                        addScoped(index, r, s, scope, g.colBins, colOf.data(), thr, a,
                                  quantile ? kept.data() : nullptr);
                } else if (index.sliceRows()) {
                    addProfile(index, r, row.length, g.colBins, colOf.data(), a);
                    if (share)
                        for (uint32_t s : row.sequences)
                            addAbove(v + run.seqBegin(s), tr ? tr + run.seqBegin(s) : nullptr, int32_t(r),
                                     run.seqLength(s), g.colBins, colOf.data(), thr, a);
                } else {
                    const size_t s = row.sequences.front();
                    addSequence(v + run.seqBegin(s), tr ? tr + run.seqBegin(s) : nullptr, run.seqLength(s),
                                g.colBins, colOf.data(), thr, a);
                }
            }
            for (size_t c = 0; c < g.cols; ++c) {
                const size_t k = g.at(i, c);
                const Acc& x = a[c];
                g.n[k] = x.n;
                if (x.n == 0)
                    continue;
                g.max[k] = x.max;
                switch (req.aggregate) {
                case HeatmapAggregate::Mean: g.value[k] = x.sum / double(x.n); break;
                case HeatmapAggregate::Max: g.value[k] = x.max; break;
                case HeatmapAggregate::ShareAbove: g.value[k] = double(x.above) / double(x.n); break;
                case HeatmapAggregate::Quantile:
                    if (top) {
                        // The heap's top is the k-th largest, x[lo]; the least of its
                        // children the (k-1)-th, x[lo+1] (type 7, as cellQuantile).
                        const std::vector<double>& h = kept[c];
                        const double hpos = double(x.n - 1) * qc;
                        const size_t lo = std::min(size_t(hpos), size_t(x.n) - 1);
                        const double lv = h.front();
                        if (lo + 1 >= x.n) {
                            g.value[k] = lv;
                        } else {
                            const double hv = h.size() > 2 ? std::min(h[1], h[2]) : h[1];
                            g.value[k] = lv + (hpos - double(lo)) * (hv - lv);
                        }
                    } else {
                        g.value[k] = cellQuantile(kept[c].data(), kept[c].size(), req.quantile);
                    }
                    break;
                }
            }
        }
        prog.done();
    });
    double lo = INFINITY, hi = -INFINITY;
    for (double x : g.value)
        if (x == x) {
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
    if (lo <= hi) {
        g.lo = lo;
        g.hi = hi;
    }
    return g;
}

}  // namespace kcx
