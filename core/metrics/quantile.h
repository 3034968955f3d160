// Exact order statistics over large arrays without sorting them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <span>
#include <vector>

namespace kcx {

// The values a summary or a quantile is taken over: an array (`data`), or a function
// (`fill`, which then wins) that writes them block by block, recomputed on every pass instead of stored
// (kcx metrics without --per-token: 8 bytes a token never written, never faulted in).
// Blocks are those of the reductions (parallel.h): block k of n values is
// [n k / nb, n (k + 1) / nb) with nb = reduceBlocks(n), at most kReduceBlock values; `fill`
// is called from several threads at once, and for the same block gives the same values.
struct ValueSource {
    size_t size = 0;
    const double* data = nullptr;
    std::function<void(size_t block, size_t begin, size_t end, double* out)> fill;
    static ValueSource of(std::span<const double> v) { return {v.size(), v.data(), {}}; }
    size_t blocks() const;
    size_t blockBegin(size_t k) const;
};

// Type-7 quantiles (numpy's default linear interpolation) of the non-NaN values, for each
// q in qs (each in [0, 1]). Exact: it selects the order statistics x[floor(h)] and
// x[floor(h)+1] with a parallel radix histogram followed by a selection inside the one
// bucket that holds them. Returns an empty vector when no value exists. `range`, when the
// caller knows it, is the minimum and maximum of the non-NaN values (at least one exists):
// the histogram then splits that range (fewer passes for values crowded near one number),
// and equal ends answer without a pass. The result is the same either way.
std::vector<double> quantilesType7(std::span<const double> values, std::span<const double> qs,
                                   int threads = 0, std::optional<std::pair<double, double>> range = {});
std::vector<double> quantilesType7(const ValueSource& values, std::span<const double> qs, int threads = 0,
                                   std::optional<std::pair<double, double>> range = {});

// The k-th smallest (0-based) of the non-NaN values. Precondition: k < count.
double orderStatistic(std::span<const double> values, size_t k, int threads = 0);

// Several order statistics (0-based ranks, each below the count of non-NaN values) from one
// histogram pass, in the order of `ranks`.
std::vector<double> orderStatistics(std::span<const double> values, std::span<const uint64_t> ranks,
                                    int threads = 0);

// Counting the values above or below a level again and again (a threshold dragged in the
// window) without a pass over all of them each time. build() partitions the values in
// place by the same 16-bit radix buckets as the quantiles (sign, exponent and 4 mantissa
// bits: O(n), one in-place permutation; their order changes, their multiset does not); a
// count then adds the sizes of whole buckets and scans the one bucket that holds the level.
class BucketedValues {
public:
    void build(std::span<double> values);   // values without NaN
    bool built() const { return !begin_.empty(); }
    // The number of values strictly above (below) `level`; `values` as build() left them.
    uint64_t countAbove(std::span<const double> values, double level) const;
    uint64_t countBelow(std::span<const double> values, double level) const;

private:
    size_t find(double level, bool& inside) const;
    std::vector<uint16_t> bucket_;   // the non-empty buckets, ascending
    std::vector<uint64_t> begin_;    // where each starts in the values; one more for the end
};

}  // namespace kcx
